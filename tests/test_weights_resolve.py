"""albert_tf.weights.resolve: a run's config and tokenizer come from the flags, else from the
--init_checkpoint source; a flag that contradicts the source is one error naming the key. And
run_classifier fine-tunes from a Hugging Face folder with neither flag."""

import shutil

import pytest

from support.interop import interop
from support.source_reads import counting_hf_reads


def test_hf_folder_supplies_config_and_spm_model():
    from albert_tf.weights.resolve import resolve_model_files

    folder = interop("hf", "classifier")
    files = resolve_model_files(folder)
    assert files.albert_config.hidden_size == 32 and files.albert_config.vocab_size == 1500
    assert files.spm_model_file.endswith("spiece.model") and files.vocab_file is None
    assert len(files.taken) == 2 and files.source.heads == ("classifier",)


def test_flags_win_and_a_contradiction_names_the_key(tmp_path):
    from albert_tf.config import AlbertConfig
    from albert_tf.weights.resolve import resolve_model_files
    from albert_tf.weights.source import SourceError

    folder = interop("hf", "classifier")
    same = tmp_path / "same.json"
    config = AlbertConfig.from_dict({**resolve_model_files(folder).albert_config.to_dict(),
                                     "hidden_dropout_prob": 0.1})  # a training choice: allowed
    same.write_text(config.to_json_string())
    files = resolve_model_files(folder, str(same))
    assert files.albert_config.hidden_dropout_prob == 0.1 and len(files.taken) == 1
    wide = tmp_path / "wide.json"
    wide.write_text(AlbertConfig.from_dict({**config.to_dict(), "hidden_size": 64,
                                            "num_attention_heads": 4}).to_json_string())
    with pytest.raises(SourceError, match=r"wide.json says hidden_size=64 but .*classifier has "
                                          r"hidden_size=32"):
        resolve_model_files(folder, str(wide))
    other_spm = tmp_path / "other.model"
    other_spm.write_bytes(b"not the folder's model")
    with pytest.raises(SourceError, match="--spm_model_file=.*other.model differs"):
        resolve_model_files(folder, spm_model_file=str(other_spm))


def test_no_source_yet_leaves_the_flags_alone(tmp_path):
    from albert_tf.weights.resolve import resolve_model_files

    files = resolve_model_files(str(tmp_path / "missing"), spm_model_file="x.model")
    assert files.source is None and files.albert_config is None
    assert files.spm_model_file == "x.model" and files.taken == ()


def test_run_classifier_fine_tunes_from_a_hf_folder_without_config_or_spm(tmp_path,
                                                                          fixtures_dir):
    from albert_tf.tasks.classification.config import GlueRunConfig
    from albert_tf.tasks.classification.task import run_glue
    from albert_tf.weights import init_from_checkpoint, open_source

    folder = tmp_path / "hf"
    shutil.copytree(interop("hf", "pretraining"), folder)
    config = GlueRunConfig.from_flat(dict(
        data_dir=str(fixtures_dir / "glue" / "data"), task_name="mrpc", do_train=True,
        init_checkpoint=str(folder), output_dir=str(tmp_path / "out"), max_seq_length=32,
        train_batch_size=4, learning_rate=1e-3, train_step=1, save_checkpoints_steps=1))
    with counting_hf_reads() as counts:
        summary = run_glue(config)
    # One run: the folder opened once, its model.safetensors read once (it was opened twice
    # and read twice: by the task's set-up and again by the initial load).
    assert counts == {"opened": 1, "read": 1}
    # The caller's config is left as given; the run took the folder's config and spm model.
    assert config.albert_config is None and config.spm_model_file is None
    assert summary["train"] is not None
    assert (tmp_path / "out" / "model.ckpt-1.index").exists()
    # The run's checkpoint is ours: the encoder came from the folder, the head was trained.
    from albert_tf.models import AlbertClassifier

    model = AlbertClassifier(open_source(folder).config, 2)
    assert model.config.hidden_size == 32
    assert "heads loaded: classifier" in init_from_checkpoint(model, str(tmp_path / "out"))


def test_a_local_tfhub_module_as_hub_handle_is_the_init_checkpoint(tmp_path):
    """--albert_hub_module_handle=<TF-Hub v1 module folder>: its variables are the weights, its
    assets' SentencePiece model the tokenizer; the config still comes from the flag."""
    from albert_tf.weights.tf1_checkpoint import write_tf1_checkpoint
    from albert_tf.weights.run_inputs import resolve_inputs
    from albert_tf.tasks.classification.config import GlueRunConfig
    from support.interop import odd_config, random_source

    config = odd_config(vocab_size=1500)
    source, _ = random_source(config)
    module = tmp_path / "module"
    (module / "variables").mkdir(parents=True)
    (module / "assets").mkdir()
    (module / "tfhub_module.pb").write_bytes(b"")
    shutil.copy(interop("hf", "pretraining", "spiece.model"), module / "assets" / "30k.model")
    write_tf1_checkpoint({"module/" + k: v for k, v in source.arrays.items()},
                         module / "variables" / "variables")
    (tmp_path / "config.json").write_text(config.to_json_string())
    run = GlueRunConfig.from_flat(dict(albert_hub_module_handle=str(module),
                                       albert_config_file=str(tmp_path / "config.json")))
    inputs = resolve_inputs(run, max_seq_length=32)
    assert inputs.init_checkpoint == str(module) and inputs.source.format == "tfhub"
    assert inputs.spm_model_file == str(module / "assets" / "30k.model")
    assert inputs.source.heads == ("mlm", "sop")
    assert run.init_checkpoint is None and run.spm_model_file is None  # left as given
    filled = inputs.run_config(run)
    assert filled.init_checkpoint == str(module) and filled.albert_config.vocab_size == 1500
