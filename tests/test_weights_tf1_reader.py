"""albert_tf.weights.readers.tf1 with a TF-Hub v1 module's layout: variables under `module/` in
`variables/variables`, a `tfhub_module.pb`, the SentencePiece model in `assets/`."""


import numpy as np

from support.interop import assert_close, inputs, interop, odd_config, random_source, run, tfhub_module


def test_tfhub_module_folder_loads_and_converts(tmp_path):
    from albert_tf.weights.tf1_checkpoint import load_tf1_checkpoint
    from albert_tf.weights import open_source
    from albert_tf.weights.arrays import source_arrays
    from albert_tf.weights.writers.hf import write_hf
    from albert_tf.models import AlbertPretrainer

    config = odd_config()
    source, model = random_source(config)
    spm = interop("hf", "pretraining", "spiece.model")
    module = open_source(tfhub_module(tmp_path / "hub", source.arrays, spm))
    assert module.format == "tfhub" and module.spm_model_file.endswith("30k-clean.model")
    again = AlbertPretrainer(config)
    report = load_tf1_checkpoint(again, module.checkpoint_prefix)
    assert report.missing == [] and report.unused == []
    feed = {k: v % config.vocab_size if k == "input_ids" else v for k, v in inputs().items()}
    assert_close(run(again, feed)["masked_lm_logits"], run(model, feed)["masked_lm_logits"],
                 "masked_lm_logits", atol=0)
    arrays = source_arrays(module)  # the `module/` scope stripped, as every writer sees them
    assert sorted(arrays) == sorted(source.arrays)
    # A TF-Hub module carries no config: the writer takes it from the caller.
    report = write_hf(module, tmp_path / "hf", config=config)
    assert report.architecture == "AlbertForPreTraining"
    np.testing.assert_array_equal(open_source(tmp_path / "hf").arrays["bert/pooler/dense/bias"],
                                  source.arrays["bert/pooler/dense/bias"])
