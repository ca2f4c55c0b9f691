"""The `albert-run-ner` command, run from a clone. Its flags and help live in
albert_tf/entry_points/run_ner.py (`python run_ner.py --help`)."""

from albert_tf.entry_points import run_ner

if __name__ == "__main__":
    run_ner.run()
