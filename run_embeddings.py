"""The `albert-run-embeddings` command, run from a clone. Its flags and help live in
albert_tf/entry_points/run_embeddings.py (`python run_embeddings.py --help`)."""

from albert_tf.entry_points import run_embeddings

if __name__ == "__main__":
    run_embeddings.run()
