"""The `albert-export-saved-model` command, run from a clone. Its flags and help live in
albert_tf/entry_points/export_saved_model.py (`python export_saved_model.py --help`)."""

from albert_tf.entry_points import export_saved_model

if __name__ == "__main__":
    export_saved_model.run()
