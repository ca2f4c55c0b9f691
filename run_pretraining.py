"""The `albert-run-pretraining` command, run from a clone. Its flags and help live in
albert_tf/entry_points/run_pretraining.py (`python run_pretraining.py --help`)."""

from albert_tf.entry_points import run_pretraining

if __name__ == "__main__":
    run_pretraining.run()
