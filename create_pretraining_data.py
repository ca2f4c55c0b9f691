"""The `albert-create-pretraining-data` command, run from a clone. Its flags and help live in
albert_tf/entry_points/create_pretraining_data.py (`python create_pretraining_data.py --help`)."""

from albert_tf.entry_points import create_pretraining_data

if __name__ == "__main__":
    create_pretraining_data.run()
