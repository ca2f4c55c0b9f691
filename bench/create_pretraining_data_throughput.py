"""Throughput and memory of create_pretraining_data.py against the original's measured figures.

The original (fixtures create_pretraining_data/timing.json) made 114,634 instances from a
10.19 MB corpus in 121.3–134.8 s wall on this 2-core machine: 850–945 instances/s, single-threaded
(so about 1.03–1.15 CPU-ms per instance). This runs our script with the same flags and
SentencePiece model on a corpus of the same shape built from ../shared/data/pretrain
(`pretraining_corpus.py`): streaming mode with 2 workers (and 1) on 1× the corpus, and with 2
workers on 4× the corpus to show that peak memory does not grow with the corpus.

Wall time is for the whole command (interpreter and TensorFlow start-up included, as in the
original's figure). The machine may be shared, so the load average is printed, and so is CPU time
per instance, which load does not inflate. Outputs go to --work_dir (default under /tmp).

    python bench/create_pretraining_data_throughput.py [--workers 2] [--skip_4x] [--with_exact]

With --beam (needs pip install -e ".[beam]"), the Apache Beam DirectRunner
(--direct_running_mode=multi_processing, --workers processes) against the local engine with the
same workers, flags and input, at 1× and 4× the corpus: instances/s, peak RSS of the main
process and of the largest worker, and whether both wrote the same multiset of records (1×).

    python bench/create_pretraining_data_throughput.py --beam [--workers 2] [--beam_output_shards 0]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import pretraining_corpus  # noqa: E402
import process_memory  # noqa: E402

ORIGINAL_INSTANCES_PER_S = (850, 945)
ORIGINAL_CPU_MS_PER_INSTANCE = (118.4 / 114_634 * 1e3, 132.2 / 114_634 * 1e3)  # user time


def shared_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("ALBERT_TF_SHARED", REPO.parent / "shared"))


def run_once(corpus: pathlib.Path, out_dir: pathlib.Path, workers: int, exact: bool = False,
             beam: bool = False, beam_shards: int = 1) -> dict:
    spm = shared_dir() / "fixtures" / "original" / "spm"
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / "pretraining.tfrecord"
    command = [
        sys.executable, str(REPO / "create_pretraining_data.py"),
        f"--input_file={corpus}", f"--output_file={output}",
        f"--vocab_file={spm / 'spm.vocab'}", f"--spm_model_file={spm / 'spm.model'}",
        "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2",
        "--masked_lm_prob=0.15", "--ngram=3", "--random_seed=12345",
        f"--num_workers={workers}", "--progress_interval_s=1000",
    ] + (["--exact_original"] if exact else []) + ([
        "--beam_runner=DirectRunner",
        f"--beam_pipeline_options=--direct_num_workers={workers} --direct_running_mode=multi_processing",
        f"--output_shards={beam_shards}",
    ] if beam else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()
    start = time.monotonic()
    completed, sampled = process_memory.run_sampled(
        command, cwd=REPO, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise SystemExit(f"command failed ({completed.returncode}): {' '.join(command)}\n"
                         f"{completed.stderr[-3000:]}")
    summary = json.loads((out_dir / "pretraining.tfrecord.summary.json").read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    instances = summary["instances"]
    return {
        "mode": summary["mode"],
        "workers": 1 if exact else workers,
        "input_mb": round(summary["input_bytes"] / 1e6, 2),
        "instances": instances,
        "wall_s": round(wall, 2),
        "instances_per_s": round(instances / wall, 1),
        "ratio_vs_original": [round(instances / wall / r, 2) for r in ORIGINAL_INSTANCES_PER_S],
        "in_script_s": summary["elapsed_s"],
        "in_script_instances_per_s": summary["instances_per_s"],
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_instance": round(cpu / instances * 1e3, 4),
        "cpu_ratio_vs_original": [round(r / (cpu / instances * 1e3), 2) for r in ORIGINAL_CPU_MS_PER_INSTANCE],
        "peak_rss_mb_main": summary.get("peak_rss_mb_main"),
        "peak_rss_mb_worker": summary.get("peak_rss_mb_worker"),
        "output_files": summary["output_files"],
        "sampled_peak_rss_mb_main": sampled["main_rss_mb"],
        "sampled_peak_rss_mb_largest_child": sampled["largest_child_rss_mb"],
        "sampled_peak_pss_mb_tree": sampled["tree_pss_mb"],
        "output_mb": round(sum(os.path.getsize(p) for p in summary["output_files"]) / 1e6, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def baseline_rss_mb() -> float:
    """Peak RSS of a process that only imports the generator (TensorFlow comes with the package)."""
    code = ("import resource, albert_tf.pretraining_data.engines; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, check=True)
    return round(float(out.stdout.split()[-1]), 1)


def sorted_digest(files) -> str:
    """Count and digest of the sorted records: equal for the same multiset in any order/shards.
    In a child process, so that this process stays small (its children inherit its peak RSS)."""
    code = ("import hashlib, sys, tensorflow as tf; "
            "r = sorted(x.numpy() for x in tf.data.TFRecordDataset(sys.argv[1:])); "
            "print(len(r), hashlib.sha256(b''.join(r)).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code, *files], capture_output=True, text=True,
                         check=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    return out.stdout.split("\n")[-2]


def beam_comparison(work: pathlib.Path, pretrain: pathlib.Path, workers: int, beam_shards: int) -> None:
    rows = []
    for copies in (1, 4):
        corpus = pretraining_corpus.build(pretrain, work / f"corpus_{copies}x.txt", copies=copies)
        print("corpus:", json.dumps(corpus), flush=True)
        path = pathlib.Path(corpus["path"])
        local = run_once(path, work / f"out_{copies}x_local", workers)
        beam = run_once(path, work / f"out_{copies}x_beam", workers, beam=True, beam_shards=beam_shards)
        same = None
        if copies == 1:
            same = sorted_digest(local["output_files"]) == sorted_digest(beam["output_files"])
        rows.append((copies, local, beam, same))
        for result in (local, beam):
            print(json.dumps({k: v for k, v in result.items() if k != "output_files"}), flush=True)
    print(f"machine: {os.cpu_count()} CPUs (shared: timings are noisy), workers={workers}, "
          f"Beam --output_shards={beam_shards}" + (" (runner decides: no shuffle)" if not beam_shards else ""))
    for copies, local, beam, same in rows:
        for name, r in (("local engine", local), ("Beam DirectRunner", beam)):
            print(f"{copies}x corpus {r['input_mb']}MB {name:>17}: {r['instances']} instances in "
                  f"{r['wall_s']}s = {r['instances_per_s']:.0f} instances/s wall "
                  f"({r['cpu_ms_per_instance']:.3f} CPU-ms/instance); sampled peak RSS main "
                  f"{r['sampled_peak_rss_mb_main']} MB, largest worker "
                  f"{r['sampled_peak_rss_mb_largest_child']} MB, whole tree PSS "
                  f"{r['sampled_peak_pss_mb_tree']} MB; load {r['load_average_before'][0]:.1f}")
        print(f"{copies}x corpus: Beam/local instances/s = "
              f"{beam['instances_per_s'] / local['instances_per_s']:.2f}"
              + ("" if same is None else f"; same sorted records: {same}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--work_dir", default="/tmp/albert_tf_bench_create_pretraining_data")
    parser.add_argument("--skip_4x", action="store_true", help="skip the 4× corpus memory run")
    parser.add_argument("--with_exact", action="store_true",
                        help="also time --exact_original (the original algorithm in our code)")
    parser.add_argument("--beam", action="store_true",
                        help="compare the Beam DirectRunner with the local engine (1x and 4x)")
    parser.add_argument("--beam_output_shards", type=int, default=0,
                        help="--output_shards of the Beam runs: 0 = one file per bundle (no shuffle "
                             "of the records: the DirectRunner's main process stays flat); N shuffles "
                             "them into N files, which the DirectRunner holds in memory")
    args = parser.parse_args()
    work = pathlib.Path(args.work_dir)
    pretrain = shared_dir() / "data" / "pretrain"
    if args.beam:
        beam_comparison(work, pretrain, args.workers, args.beam_output_shards)
        return
    corpus_1x = pretraining_corpus.build(pretrain, work / "corpus_1x.txt")
    print("corpus:", json.dumps(corpus_1x))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}")
    print(f"baseline: peak RSS of importing the package = {baseline_rss_mb()} MB")
    results = [run_once(pathlib.Path(corpus_1x["path"]), work / "out_1x_w", args.workers),
               run_once(pathlib.Path(corpus_1x["path"]), work / "out_1x_w1", 1)]
    if args.with_exact:
        results.append(run_once(pathlib.Path(corpus_1x["path"]), work / "out_1x_exact", 1, exact=True))
    if not args.skip_4x:
        corpus_4x = pretraining_corpus.build(pretrain, work / "corpus_4x.txt", copies=4)
        results.append(run_once(pathlib.Path(corpus_4x["path"]), work / "out_4x_w", args.workers))
    for result in results:
        print(json.dumps(result))
    print(f"original: {ORIGINAL_INSTANCES_PER_S[0]}-{ORIGINAL_INSTANCES_PER_S[1]} instances/s "
          f"(1 core, {ORIGINAL_CPU_MS_PER_INSTANCE[0]:.3f}-{ORIGINAL_CPU_MS_PER_INSTANCE[1]:.3f} CPU-ms/instance)")
    for result in results:
        low, high = result["ratio_vs_original"]
        print(f"{result['mode']:>14} workers={result['workers']} input={result['input_mb']}MB: "
              f"{result['instances_per_s']:.0f} instances/s wall = {high:.1f}-{low:.1f}x the original; "
              f"{result['cpu_ms_per_instance']:.3f} CPU-ms/instance = "
              f"{result['cpu_ratio_vs_original'][0]:.1f}-{result['cpu_ratio_vs_original'][1]:.1f}x less CPU; "
              f"peak RSS main {result['peak_rss_mb_main']} MB, worker "
              f"{result['peak_rss_mb_worker']} MB; load {result['load_average_before'][0]:.1f}")


if __name__ == "__main__":
    main()
