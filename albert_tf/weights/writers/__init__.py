"""The writers by output format name (what `--output_format` takes)."""

from __future__ import annotations


def write(source, output, output_format: str, config=None, spm_model_file=None):
    """Writes `source` to `output` in `output_format` (`tf1`, `hf`, `keras_hub`); returns the
    writer's `WriteReport`."""
    from albert_tf.convert.hf_writer import write_hf
    from albert_tf.convert.keras_hub_writer import write_keras_hub
    from albert_tf.convert.source import SourceError
    from albert_tf.convert.tf1_writer import write_tf1

    import os

    from albert_tf.errors import OutputError

    writers = {"tf1": write_tf1, "hf": write_hf, "keras_hub": write_keras_hub}
    if output_format not in writers:
        raise SourceError(f"--output_format {output_format!r}: known formats are "
                          f"{', '.join(writers)}")
    if os.path.exists(output):  # before reading any weights
        raise OutputError(f"{output} already exists; refusing to replace it")
    return writers[output_format](source, output, config=config, spm_model_file=spm_model_file)


OUTPUT_FORMATS = ("tf1", "hf", "keras_hub")
