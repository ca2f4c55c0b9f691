"""Converts ALBERT weights between formats:

  python -m albert_tf.weights --input=SRC --output=DST --output_format=tf1|hf|keras_hub

(`python -m albert_tf.convert` runs the same.) SRC is anything `open_source` reads (TF1
checkpoint, output_dir, HF folder, keras-hub preset, TF-Hub module); `--albert_config_file` /
`--spm_model_file` (or `--vocab_file`, a WordPiece model's) fill in what SRC lacks.
"""


from absl import flags

from albert_tf import cli
from albert_tf import io_utils

cli.define_flags(__name__, "input output output_format albert_config_file spm_model_file vocab_file")
FLAGS = flags.FLAGS


def resolve_path(path):
    if not path:
        return None
    return io_utils.absolute_path(path)


def main(argv):
    del argv
    # Imported once the flags are parsed: the readers import TensorFlow, which --help and a
    # flag error need not wait for.
    from albert_tf.weights import writers

    source = writers.open_to_write(resolve_path(FLAGS.input))
    if FLAGS.vocab_file:  # a WordPiece model's vocabulary (our run's output_dir holds none)
        source.vocab_file = writers.vocab_file_flag(resolve_path(FLAGS.vocab_file))
    print(f"read {source.describe()}")
    report = writers.write(source, resolve_path(FLAGS.output), FLAGS.output_format,
                           config=resolve_path(FLAGS.albert_config_file),
                           spm_model_file=resolve_path(FLAGS.spm_model_file))
    print(report.describe())


if __name__ == "__main__":
    cli.run(main, required=["input", "output", "output_format"])
