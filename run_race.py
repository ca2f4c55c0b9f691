"""The `albert-run-race` command, run from a clone. Its flags and help live in
albert_tf/entry_points/run_race.py (`python run_race.py --help`)."""

from albert_tf.entry_points import run_race

if __name__ == "__main__":
    run_race.run()
