"""The whole cycle in Korean, as a user runs it, on NSMC (bench/nsmc_data.py builds the files):

1. `python -m albert_tf.train_vocab --model_type=wordpiece --nodo_lower_case` on corpus.txt;
2. create_pretraining_data.py on held-out text with only `--vocab_file` (the casing comes from
   the vocabulary's tokenizer_config.json): its summary's unk_rate (acceptance: <= 2 %);
3. run_pretraining.py (a tiny ALBERT, a few hundred steps);
4. run_classifier.py --task_name=tsv on the NSMC-format files as they are (bare quotes, a test
   file without labels), from the pretrained checkpoint (acceptance: dev accuracy >= 0.65),
   with --export_dir;
5. the export's `serve_text` on the test file's raw texts: its labels must equal the CLI's
   test_predictions.tsv.

    python bench/korean_cycle.py --data=data/nsmc --work=/tmp/korean_cycle

Prints one JSON object with every measured number and each stage's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = {"vocab_size": None, "embedding_size": 64, "hidden_size": 256, "num_hidden_layers": 4,
        "num_attention_heads": 4, "intermediate_size": 1024, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 128, "type_vocab_size": 2, "initializer_range": 0.02,
        "num_hidden_groups": 1, "inner_group_num": 1, "down_scale_factor": 1}


def run(stage, times, *args):
    start = time.time()
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True)
    times[stage] = round(time.time() - start, 1)
    if done.returncode:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-6000:])
        raise SystemExit(f"{stage} failed (exit {done.returncode})")
    return done.stdout + done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--vocab_size", type=int, default=8000)
    parser.add_argument("--pretrain_steps", type=int, default=300)
    parser.add_argument("--finetune_steps", type=int, default=600)
    parser.add_argument("--finetune_learning_rate", type=float, default=1e-4)
    parser.add_argument("--reuse", action="store_true", help="keep the vocabulary, the "
                        "pretraining data and the pretrained checkpoint of an earlier run in "
                        "--work (fine-tune again only)")
    args = parser.parse_args()
    data, work = os.path.abspath(args.data), os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    times, result = {}, {}
    vocab_dir = os.path.join(work, "vocab")
    reuse = args.reuse and os.path.exists(os.path.join(work, "pretrain", "eval_results.txt"))
    if not reuse:
        pretrain(args, data, work, vocab_dir, times)
    with open(os.path.join(work, "heldout.tfrecord.summary.json")) as f:
        summary = json.load(f)
    result["pretraining_data"] = {k: summary[k] for k in (
        "unk_rate", "unk_tokens", "corpus_tokens", "do_lower_case", "instances", "documents")}
    pretrain_dir, vocab = os.path.join(work, "pretrain"), os.path.join(vocab_dir, "vocab.txt")
    config_file = os.path.join(work, "albert_config.json")
    with open(os.path.join(pretrain_dir, "eval_results.txt")) as f:
        result["pretraining_eval"] = dict(line.strip().split(" = ") for line in f if " = " in line)

    tune_dir, export_dir = os.path.join(work, "classifier"), os.path.join(work, "export")
    for folder in (tune_dir, export_dir):
        shutil.rmtree(folder, ignore_errors=True)
    log = run("run_classifier", times, "run_classifier.py", "--task_name=tsv",
              f"--train_file={data}/train.tsv", f"--dev_file={data}/dev.tsv",
              f"--test_file={data}/test.tsv", "--text_a_column=document", "--id_column=id",
              f"--init_checkpoint={pretrain_dir}", f"--albert_config_file={config_file}",
              f"--vocab_file={vocab}", f"--output_dir={tune_dir}", f"--export_dir={export_dir}",
              "--do_train", "--do_eval", "--do_predict", "--max_seq_length=64",
              "--train_batch_size=32", f"--learning_rate={args.finetune_learning_rate}",
              f"--train_step={args.finetune_steps}", "--warmup_step=60",
              f"--save_checkpoints_steps={args.finetune_steps}", "--log_every_steps=200")
    result["finetune_unk_lines"] = re.findall(r"\[UNK\] rate [^\n]*", log)
    with open(os.path.join(tune_dir, "eval_results.txt")) as f:
        result["dev"] = dict(line.strip().split(" = ") for line in f if " = " in line)

    start = time.time()
    result["serve_text"] = compare_export(data, tune_dir, export_dir)
    times["serve_text"] = round(time.time() - start, 1)
    result["seconds"] = times
    result["total_seconds"] = round(sum(times.values()), 1)
    print(json.dumps(result, indent=1, ensure_ascii=False))


def pretrain(args, data, work, vocab_dir, times):
    """Steps 1-3: the vocabulary, the pretraining data (its summary beside it), pretraining."""
    run("train_vocab", times, "-m", "albert_tf.train_vocab", f"--input={data}/corpus.txt",
        f"--output_dir={vocab_dir}", "--model_type=wordpiece",
        f"--vocab_size={args.vocab_size}", "--nodo_lower_case")
    vocab = os.path.join(vocab_dir, "vocab.txt")
    with open(vocab, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    config = dict(TINY, vocab_size=vocab_size)
    config_file = os.path.join(work, "albert_config.json")
    with open(config_file, "w") as f:
        json.dump(config, f, indent=1)

    records = os.path.join(work, "heldout.tfrecord")
    run("create_pretraining_data", times, "create_pretraining_data.py",
              f"--input_file={data}/heldout.txt", f"--output_file={records}",
              f"--vocab_file={vocab}", "--max_seq_length=64", "--max_predictions_per_seq=10",
              "--dupe_factor=1", "--masked_lm_prob=0.15")
    pretrain_dir = os.path.join(work, "pretrain")
    run("run_pretraining", times, "run_pretraining.py", f"--albert_config_file={config_file}",
        f"--input_file={records}", f"--output_dir={pretrain_dir}", "--do_train",
        "--do_eval", "--max_seq_length=64", "--max_predictions_per_seq=10",
        "--train_batch_size=64", "--eval_batch_size=64", "--max_eval_steps=20",
        "--optimizer=lamb", "--learning_rate=0.005", f"--num_train_steps={args.pretrain_steps}",
        "--num_warmup_steps=30", f"--save_checkpoints_steps={args.pretrain_steps}",
        "--log_every_steps=50")


def compare_export(data, tune_dir, export_dir) -> dict:
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - the in-graph WordPiece op of serve_text

    with open(os.path.join(data, "test.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    with open(os.path.join(data, "test_labels.tsv"), encoding="utf-8") as f:
        gold = {r[0]: r[2] for r in (line.rstrip("\n").split("\t") for line in f) if r[0] != "id"}
    with open(os.path.join(tune_dir, "test_predictions.tsv"), encoding="utf-8") as f:
        cli = dict(line.rstrip("\n").split("\t")[:2] for line in f if not line.startswith("id\t"))
    version = max(int(v) for v in os.listdir(export_dir) if v.isdigit())
    serve = tf.saved_model.load(os.path.join(export_dir, str(version))).signatures["serve_text"]
    served = []
    for start in range(0, len(rows), 100):
        batch = [text for _, text in rows[start:start + 100]]
        served += [x.decode() for x in serve(text_a=tf.constant(batch))["labels"].numpy()]
    same = sum(cli[i] == s for (i, _), s in zip(rows, served))
    correct = sum(gold[i] == s for (i, _), s in zip(rows, served))
    return {"test_rows": len(rows), "equal_to_cli": same, "test_accuracy": round(correct / len(rows), 4)}


if __name__ == "__main__":
    main()
