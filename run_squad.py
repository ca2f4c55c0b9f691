"""The `albert-run-squad` command, run from a clone. Its flags and help live in
albert_tf/entry_points/run_squad.py (`python run_squad.py --help`)."""

from albert_tf.entry_points import run_squad

if __name__ == "__main__":
    run_squad.run()
