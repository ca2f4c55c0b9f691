"""`TextEncoder` against sentence-transformers (torch), the library users already have.

    pip install torch==2.13.0 transformers sentence-transformers   # bench only, never the package
    python bench/sentence_transformers_peer.py --folder=embedder --stsb=../shared/data/glue/STS-B \
        --output_dir=/tmp/st_peer [--pairs=300] [--train_steps=0]

1. `python -m albert_tf.weights --output_format=hf` converts --folder (any model folder; an
   embeddings folder's pooling is mean here) to a Hugging Face folder; sentence-transformers
   loads it as Transformer + Pooling(mean) + Normalize, and both encode --pairs STS-B dev
   sentence pairs: the run reports the largest difference between the vectors, and how many
   texts the two tokenizers cut into other ids.
2. With --train_steps > 0: the same pretrained folder trained on STS-B train's pairs scored >= 2.5,
   the same batches in the same order, by `TextEncoder.fit` (contrastive, temperature 0.05,
   symmetric) and by sentence-transformers' MultipleNegativesRankingLoss (scale 20), then both
   scored on STS-B dev (Spearman x100). Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

for _name, _value in (("TF_CPP_MIN_LOG_LEVEL", "3"), ("KERAS_BACKEND", "tensorflow")):
    os.environ.setdefault(_name, _value)
REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import argparse  # noqa: E402

import numpy as np  # noqa: E402

from albert_tf.tasks.embeddings import TextEncoder  # noqa: E402
from albert_tf.tasks.embeddings.pairs import read_pairs, spearman  # noqa: E402
from albert_tf.tasks.embeddings.run import positives  # noqa: E402


def sentence_transformer(hf_folder, max_seq_length):
    from sentence_transformers import SentenceTransformer, models

    word = models.Transformer(str(hf_folder), max_seq_length=max_seq_length)
    pooling = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[word, pooling, models.Normalize()], device="cpu")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", required=True)
    parser.add_argument("--stsb", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--train_steps", type=int, default=0)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=False)
    hf = os.path.join(args.output_dir, "hf")
    subprocess.run([sys.executable, "-m", "albert_tf.weights", f"--input={args.folder}",
                    f"--output={hf}", "--output_format=hf"], check=True, cwd=REPO,
                   capture_output=True)
    ours = TextEncoder.from_pretrained(args.folder, pooling="mean")
    peer = sentence_transformer(hf, ours.max_seq_length)
    dev = read_pairs(os.path.join(args.stsb, "dev.tsv"))
    texts = dev.texts_a[:args.pairs] + dev.texts_b[:args.pairs]
    ids_peer = [peer.tokenizer(t, truncation=True, max_length=ours.max_seq_length)["input_ids"]
                for t in texts]
    other_ids = sum(a != ours.ids(t) for a, t in zip(ids_peer, texts))
    same = [t for a, t in zip(ids_peer, texts) if a == ours.ids(t)]
    difference = float(np.abs(ours.encode(same) - peer.encode(same, batch_size=32)).max())
    result = {"texts": len(texts), "texts_with_other_ids": other_ids,
              "max_abs_difference_same_ids": difference}
    if args.train_steps:
        result.update(train(args, ours, dev))
    print(json.dumps(result, indent=2))


def train(args, ours, dev):
    import torch
    from sentence_transformers import losses

    train_pairs = positives(read_pairs(os.path.join(args.stsb, "train.tsv")))
    count = args.train_steps * args.batch_size
    rng = np.random.default_rng(0)
    order = rng.permutation(len(train_pairs))[:count]
    pairs = [(train_pairs.texts_a[i], train_pairs.texts_b[i]) for i in order]
    fresh = TextEncoder.from_pretrained(args.folder, pooling="mean")
    fresh.fit(pairs, batch_size=args.batch_size, learning_rate=args.learning_rate,
              shuffle=False, warmup_proportion=0.1)
    ours_score = fresh.evaluate(dev.texts_a, dev.texts_b, dev.scores)["spearman"]

    peer = sentence_transformer(os.path.join(args.output_dir, "hf"), ours.max_seq_length)
    loss = losses.MultipleNegativesRankingLoss(peer, scale=20.0)
    optimizer = torch.optim.AdamW(peer.parameters(), lr=args.learning_rate, weight_decay=0.01)
    steps = len(pairs) // args.batch_size
    warmup = int(steps * 0.1)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: (k + 1) / max(1, warmup) if k < warmup else
        max(0.0, (steps - k) / max(1, steps - warmup)))
    peer.train()
    for step in range(steps):
        batch = pairs[step * args.batch_size:(step + 1) * args.batch_size]
        features = [peer.tokenize([a for a, _ in batch]), peer.tokenize([b for _, b in batch])]
        value = loss(features, torch.zeros(len(batch)))
        optimizer.zero_grad()
        value.backward()
        torch.nn.utils.clip_grad_norm_(peer.parameters(), 1.0)
        optimizer.step()
        schedule.step()
    peer.eval()
    a = peer.encode(dev.texts_a, batch_size=64)
    b = peer.encode(dev.texts_b, batch_size=64)
    peer_score = 100 * spearman((a * b).sum(-1), dev.scores)
    return {"train_steps": steps, "fit_spearman": round(ours_score, 2),
            "sentence_transformers_mnrl_spearman": round(peer_score, 2)}


if __name__ == "__main__":
    main()
