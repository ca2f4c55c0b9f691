"""The `albert-run-classifier` command, run from a clone. Its flags and help live in
albert_tf/entry_points/run_classifier.py (`python run_classifier.py --help`)."""

from albert_tf.entry_points import run_classifier

if __name__ == "__main__":
    run_classifier.run()
