"""run_race.py end to end on the real RACE files with a tiny model and a few steps."""

import subprocess
import sys

from albert_tf.config import AlbertConfig
from support.configs import READING_TINY
from support.paths import REPO

TINY = AlbertConfig(**READING_TINY)


def test_run_race_reports_middle_high_and_all(data_dir, spm_model, tmp_path):
    config = tmp_path / "albert_config.json"
    TINY.to_json_file(config)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "run_race.py", f"--data_dir={data_dir / 'race'}",
                    f"--albert_config_file={config}", f"--spm_model_file={spm_model}",
                    f"--output_dir={out}", "--max_seq_length=64", "--max_qa_length=16",
                    "--train_step=1", "--warmup_step=0", "--save_checkpoints_steps=1",
                    "--train_batch_size=4", "--learning_rate=1e-3", "--do_predict"],
                   cwd=REPO, check=True, capture_output=True)
    results = (out / "eval_results.txt").read_text()
    for key in ("eval_accuracy", "middle_accuracy", "high_accuracy", "best eval_accuracy"):
        assert key in results
    predict = (out / "predict_results.txt").read_text()
    assert "middle_accuracy" in predict and "high_accuracy" in predict and "best = " in predict
    assert (out / "model.ckpt-best.index").exists()
