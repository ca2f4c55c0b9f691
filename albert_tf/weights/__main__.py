"""Converts ALBERT weights between formats:

  python -m albert_tf.convert --input=SRC --output=DST --output_format=tf1|hf|keras_hub

SRC is anything `open_source` reads (TF1 checkpoint, output_dir, HF folder, keras-hub preset,
TF-Hub module); `--albert_config_file` / `--spm_model_file` fill in what SRC lacks.
"""

import os

from absl import flags

from albert_tf import cli

cli.define_flags(__name__, "input output output_format albert_config_file spm_model_file")
FLAGS = flags.FLAGS


def resolve_path(path):
    if not path:
        return None
    return path if "://" in path else os.path.abspath(os.path.expanduser(path))


def main(argv):
    del argv
    from albert_tf.convert import open_source
    from albert_tf.convert.writers import write

    from albert_tf.convert.arrays import heads_of, source_arrays

    source = open_source(resolve_path(FLAGS.input))
    if source.arrays is None and source.format != "albert_tf":  # read once, to name its heads
        source.arrays = source_arrays(source)
        source.heads = source.heads or heads_of(source.arrays)
    print(f"read {source.describe()}")
    report = write(source, resolve_path(FLAGS.output), FLAGS.output_format,
                   config=resolve_path(FLAGS.albert_config_file),
                   spm_model_file=resolve_path(FLAGS.spm_model_file))
    print(report.describe())


if __name__ == "__main__":
    cli.run(main, required=["input", "output", "output_format"])
