"""The `albert-export-checkpoints` command, run from a clone. Its flags and help live in
albert_tf/entry_points/export_checkpoints.py (`python export_checkpoints.py --help`)."""

from albert_tf.entry_points import export_checkpoints

if __name__ == "__main__":
    export_checkpoints.run()
