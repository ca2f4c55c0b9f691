"""`TextEncoder`: one L2-normalised vector per text, fine-tuned on pairs, searched
(exactly, or through an HNSW graph):

    encoder = TextEncoder.from_pretrained("pretraining_output_dir", pooling="mean")
    vectors = encoder.encode(["A man is playing a guitar.", "Someone plays music."])
    encoder.fit([("A man is playing a guitar.", "Someone plays music."), ...])  # in-batch negatives
    encoder.fit(pairs, scores=[4.2, ...], score_range=(0, 5))                 # cosine loss
    encoder.evaluate(texts_a, texts_b, scores)    # {'spearman': x100, 'pearson': x100, ...}
    encoder.search(["a guitar"], encoder.encode(corpus), top_k=10)   # exact (numpy)
    encoder.search(["a guitar"], HnswIndex.build(vectors), top_k=10)  # faiss HNSW, [search]
    encoder.save("embedder")    # a folder --init_checkpoint / from_pretrained read alone

Pooling and losses: `embedding.py`. `save` writes albert_config.json, the checkpoint, the
tokenizer file with tokenizer_config.json and `embedding_config.json` (pooling,
max_seq_length), which `from_pretrained` reads back.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

from albert_tf import io_utils
from albert_tf.models import AlbertModel
from albert_tf.optimization import create_optimizer
from albert_tf.serving.tflite import export_tflite
from albert_tf.tasks.embeddings import embedding
from albert_tf.tasks.embeddings.pairs import EmbeddingsError, Pairs, pearson, spearman
from albert_tf.tasks.embeddings.vector_search import HnswIndex
from albert_tf.tokenization import FullTokenizer, preprocess_text
from albert_tf.tokenization.settings import write_settings
from albert_tf.weights.loading import load
from albert_tf.weights.run_inputs import resolve_inputs
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint

EMBEDDING_CONFIG = "embedding_config.json"
CHECKPOINT = "model.ckpt-best"


def _texts(texts, where: str) -> list[str]:
    if isinstance(texts, str) or not hasattr(texts, "__len__"):
        raise EmbeddingsError(f"{where}: expected a list of texts, got {type(texts).__name__}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise EmbeddingsError(f"{where}[{i}]: expected a str, got {type(text).__name__}")
    return list(texts)


def read_embedding_config(folder) -> dict:
    path = os.path.join(os.fspath(folder), EMBEDDING_CONFIG)
    if not os.path.isdir(os.fspath(folder)) or not os.path.isfile(path):
        return {}
    return io_utils.read_json_object(path)


class TextEncoder:
    """An `AlbertModel`, its tokenizer and a pooling; see the module docstring."""

    def __init__(self, model: AlbertModel, tokenizer: FullTokenizer, pooling: str = "mean",
                 max_seq_length: int = 128, inputs=None):
        if pooling not in embedding.POOLINGS:
            raise EmbeddingsError(f"pooling must be one of {', '.join(embedding.POOLINGS)}, "
                                  f"got {pooling!r}")
        if not 3 <= int(max_seq_length) <= model.config.max_position_embeddings:
            raise EmbeddingsError(f"max_seq_length={max_seq_length} must be between 3 and the "
                                  f"model's max_position_embeddings "
                                  f"({model.config.max_position_embeddings})")
        self.model, self.tokenizer, self.inputs = model, tokenizer, inputs
        self.pooling, self.max_seq_length = pooling, int(max_seq_length)
        self.do_lower_case = tokenizer.do_lower_case
        self._digest = None
        # The pooling is a Python argument: one trace per pooling (it may be changed later).
        self._embed = tf.function(
            lambda ids, mask, pooling: embedding.embed(self.model, ids, mask, pooling),
            autograph=False, reduce_retracing=True)

    @classmethod
    def from_pretrained(cls, path, pooling: str | None = None, max_seq_length: int | None = None,
                        spm_model_file=None, vocab_file=None, albert_config_file=None,
                        do_lower_case=None) -> "TextEncoder":
        """`path`: any weight source (a pretraining output_dir, a released model folder, an HF
        or keras-hub folder, a folder `save` wrote); its config and tokenizer unless given.
        `pooling` and `max_seq_length`: the folder's `embedding_config.json`, else mean and
        128 (or the model's max_position_embeddings if smaller)."""
        path = os.fspath(path)
        inputs = resolve_inputs(init_checkpoint=path, albert_config_file=albert_config_file,
                                spm_model_file=spm_model_file, vocab_file=vocab_file,
                                do_lower_case=do_lower_case, trains=True)
        if inputs.albert_config is None:
            raise EmbeddingsError(f"{path} holds no model config (albert_config.json, "
                                  "config.json); pass albert_config_file=")
        if not (inputs.spm_model_file or inputs.vocab_file):
            raise EmbeddingsError(f"{path} holds no tokenizer file; pass spm_model_file= (or "
                                  "vocab_file= for a WordPiece model)")
        recorded = read_embedding_config(path)
        config = inputs.albert_config
        model = AlbertModel(config)
        load(model, inputs.source)
        tokenizer = FullTokenizer(inputs.vocab_file, inputs.do_lower_case, inputs.spm_model_file)
        return cls(model, tokenizer, pooling or recorded.get("pooling", "mean"),
                   max_seq_length or recorded.get("max_seq_length")
                   or min(128, config.max_position_embeddings), inputs)

    # ---------------------------------------------------------------- encoding
    def ids(self, text: str) -> list[int]:
        """[CLS] pieces [SEP], cut to max_seq_length (as run_classifier's single texts)."""
        if self.tokenizer.sp_model is not None:
            text = preprocess_text(text, lower=self.do_lower_case)
        pieces = self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(text))
        vocab = self.tokenizer.vocab
        return [vocab["[CLS]"], *pieces[:self.max_seq_length - 2], vocab["[SEP]"]]

    def _arrays(self, texts) -> tuple[np.ndarray, np.ndarray]:
        rows = [self.ids(t) for t in texts]
        width = max(len(r) for r in rows)
        ids, mask = np.zeros((len(rows), width), np.int32), np.zeros((len(rows), width), np.int32)
        for i, row in enumerate(rows):
            ids[i, :len(row)], mask[i, :len(row)] = row, 1
        return ids, mask

    def encode(self, texts, batch_size: int = 32) -> np.ndarray:
        """[len(texts), hidden_size] float32, each row of length 1."""
        texts = _texts(texts, "texts")
        if not texts:
            return np.zeros((0, self.model.config.hidden_size), np.float32)
        out = [self._embed(*self._arrays(texts[i:i + int(batch_size)]), self.pooling).numpy()
               for i in range(0, len(texts), int(batch_size))]
        return np.concatenate(out)

    # ---------------------------------------------------------------- training
    def fit(self, pairs, scores=None, epochs: int = 1, batch_size: int = 32,
            learning_rate: float = 2e-5, temperature: float = 0.05, score_range=(0.0, 1.0),
            warmup_proportion: float = 0.1, seed: int | None = 0, shuffle: bool = True) -> dict:
        """Fine-tunes on `pairs` ((a, b) tuples or a `pairs.Pairs`): with `scores`, the cosine
        loss against each score mapped from `score_range` to 0..1; without, the symmetric
        contrastive loss with in-batch negatives at `temperature` (`embedding.py`). AdamW
        with the original's warm-up and linear decay. Returns {"loss": the last epoch's mean,
        "steps": ...}."""
        if isinstance(pairs, Pairs):
            texts_a, texts_b = pairs.texts_a, pairs.texts_b
            scores, score_range = (pairs.scores, pairs.score_range) if scores is None \
                else (scores, score_range)
        else:
            if isinstance(pairs, str) or not hasattr(pairs, "__len__"):
                raise EmbeddingsError("pairs: expected a list of (text_a, text_b) pairs")
            for i, pair in enumerate(pairs):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise EmbeddingsError(f"pairs[{i}]: expected a (text_a, text_b) pair, got "
                                          f"{pair!r:.80}")
            texts_a = _texts([p[0] for p in pairs], "pairs[:, 0]")
            texts_b = _texts([p[1] for p in pairs], "pairs[:, 1]")
        if not texts_a:
            raise EmbeddingsError("pairs: no pairs")
        if int(epochs) < 1 or int(batch_size) < 1:
            raise EmbeddingsError(f"epochs and batch_size must be at least 1, got {epochs} "
                                  f"and {batch_size}")
        if not temperature > 0:
            raise EmbeddingsError(f"temperature must be above 0, got {temperature}")
        targets = None
        if scores is not None:
            if len(scores) != len(texts_a):
                raise EmbeddingsError(f"{len(texts_a)} pairs but {len(scores)} scores")
            low, high = (float(v) for v in score_range)
            values = np.asarray(scores, np.float64)
            outside = np.flatnonzero((values < low) | (values > high))
            if outside.size:
                raise EmbeddingsError(f"scores[{outside[0]}] = {values[outside[0]]:g} is "
                                      f"outside score_range {low:g}..{high:g}")
            targets = ((values - low) / (high - low)).astype(np.float32)
        steps_per_epoch = math.ceil(len(texts_a) / int(batch_size))
        steps = steps_per_epoch * int(epochs)
        optimizer = create_optimizer(float(learning_rate), steps,
                                     int(steps * float(warmup_proportion)), "adamw")
        variables = self.model.trainable_variables
        loss_of = (lambda a, b, t: embedding.cosine_loss(a, b, t)) if targets is not None \
            else (lambda a, b, t: embedding.contrastive_loss(a, b, float(temperature)))

        def train_step(ids_a, mask_a, ids_b, mask_b, target):
            with tf.GradientTape() as tape:
                loss = loss_of(embedding.embed(self.model, ids_a, mask_a, self.pooling, True),
                               embedding.embed(self.model, ids_b, mask_b, self.pooling, True),
                               target)
            # (the pooler has no gradient unless it pools: left out, not warned about)
            optimizer.apply_gradients([(gradient, variable) for gradient, variable in zip(
                tape.gradient(loss, variables), variables) if gradient is not None])
            return loss

        step = tf.function(train_step, autograph=False, reduce_retracing=True)
        rng = np.random.default_rng(seed)
        if seed is not None:
            keras.utils.set_random_seed(int(seed))
        losses = []
        for _ in range(int(epochs)):
            order = rng.permutation(len(texts_a)) if shuffle else np.arange(len(texts_a))
            losses = []
            for start in range(0, len(order), int(batch_size)):
                chosen = order[start:start + int(batch_size)]
                ids_a, mask_a = self._arrays([texts_a[i] for i in chosen])
                ids_b, mask_b = self._arrays([texts_b[i] for i in chosen])
                target = targets[chosen] if targets is not None else np.zeros(len(chosen),
                                                                             np.float32)
                losses.append(float(step(ids_a, mask_a, ids_b, mask_b, target)))
        self._digest = None
        return {"loss": float(np.mean(losses)), "steps": steps}

    # ---------------------------------------------------------------- scoring and search
    def evaluate(self, texts_a, texts_b, scores, batch_size: int = 32) -> dict:
        """STS-style scores ×100: Spearman's and Pearson's correlation of the pairs' cosines
        with `scores`."""
        texts_a, texts_b = _texts(texts_a, "texts_a"), _texts(texts_b, "texts_b")
        if len(texts_a) != len(texts_b) or len(texts_a) != len(scores) or len(texts_a) < 2:
            raise EmbeddingsError(f"evaluate needs as many texts_a, texts_b and scores (at "
                                  f"least 2), got {len(texts_a)}, {len(texts_b)}, {len(scores)}")
        cosines = (self.encode(texts_a, batch_size) * self.encode(texts_b, batch_size)).sum(-1)
        return {"spearman": 100 * spearman(cosines, scores),
                "pearson": 100 * pearson(cosines, scores), "pairs": len(texts_a)}

    def search(self, queries, corpus_embeddings, top_k: int = 10) -> list:
        """Search by cosine: for each query (a text, or its vector from `encode`) its `top_k`
        corpus rows, best first (ties: lower row first), as [{"corpus_id": row, "score":
        cosine}, ...] (sentence-transformers' semantic_search). `corpus_embeddings`: the
        vectors ([n, H], exact search: numpy dot products) or a `vector_search.HnswIndex`
        built from them (approximate: faiss' HNSW graph, the [search] extra)."""
        if isinstance(queries, str):
            queries = [queries]
        if isinstance(queries, (list, tuple)) and queries and isinstance(queries[0], str):
            queries = self.encode(queries)
        queries = np.asarray(queries, np.float32)
        graph = corpus_embeddings if isinstance(corpus_embeddings, HnswIndex) else None
        corpus = None if graph is not None else np.asarray(corpus_embeddings, np.float32)
        size, dim = (graph.size, graph.dim) if graph is not None else (len(corpus), corpus.shape[-1])
        if (corpus is not None and corpus.ndim != 2) or not size:
            raise EmbeddingsError("corpus_embeddings: an empty corpus; nothing to search")
        if queries.ndim == 1:
            queries = queries[None]
        if queries.shape[-1] != dim:
            raise EmbeddingsError(f"queries have {queries.shape[-1]} dimensions but the corpus "
                                  f"{dim}: vectors of another model?")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise EmbeddingsError(f"top_k must be an integer of at least 1, got {top_k!r}")
        if graph is not None:
            found = zip(*graph.search(queries, top_k))
            return [sorted(({"corpus_id": int(i), "score": float(s)} for s, i in zip(*row)
                            if i >= 0), key=lambda r: (-r["score"], r["corpus_id"]))
                    for row in found]
        scores = queries @ corpus.T
        # the k-th best score of each query bounds its candidates (ties at it kept), which
        # are then ordered by score, lower row first: a full sort's top_k, without the sort
        last = size - min(top_k, size)
        bound = np.partition(scores, last, axis=1)[:, last]
        results = []
        for row, least in zip(scores, bound):
            kept = np.flatnonzero(row >= least)
            best = kept[np.lexsort((kept, -row[kept]))][:top_k]
            results.append([{"corpus_id": int(i), "score": float(row[i])} for i in best])
        return results

    def export_tflite(self, output_dir, kinds="float32") -> dict:
        """`<output_dir>/embedder.<kind>.tflite` (builtin ops; ids in, `embeddings` out: this
        pooling, L2-normalised), the tokenizer file and `embedder.json`, for
        `serving.lite.LiteEmbedder`; returns {kind: path, "metadata": path}."""
        model, pooling = self.model, self.pooling

        def call(input_word_ids, input_mask, input_type_ids):
            outputs = model({"input_ids": input_word_ids, "input_mask": input_mask,
                             "segment_ids": input_type_ids}, training=False)
            return {"embeddings": embedding.pool(outputs, input_mask, pooling)}

        return export_tflite(model, output_dir, self.max_seq_length, kinds, name="embedder",
                             outputs=("embeddings",), call=call,
                             spm_model_file=self.tokenizer.spm_model_file,
                             vocab_file=None if self.tokenizer.spm_model_file
                             else self.tokenizer.vocab_file, do_lower_case=self.do_lower_case)

    # ---------------------------------------------------------------- files
    @property
    def digest(self) -> str:
        """sha256 of what decides a text's vector: the weights, the tokenizer file, the
        casing, the pooling and the length (a search index records it)."""
        if self._digest is None:
            hasher = hashlib.sha256()
            hasher.update(json.dumps([self.pooling, self.max_seq_length,
                                      bool(self.do_lower_case)]).encode())
            tokenizer_file = self.tokenizer.spm_model_file or self.tokenizer.vocab_file
            hasher.update(io_utils.read_bytes(tokenizer_file))
            for weight in self.model.weights:
                hasher.update(np.ascontiguousarray(weight.numpy()).tobytes())
            self._digest = hasher.hexdigest()
        return self._digest

    def save(self, folder, extra_files: dict | None = None) -> str:
        """Writes a new folder (refused when it exists) holding everything `from_pretrained`
        needs; `extra_files` ({name: text}) are written inside it too. Nothing appears until
        all of it is written."""
        folder = os.path.abspath(os.fspath(folder))
        tokenizer_file = self.tokenizer.spm_model_file or self.tokenizer.vocab_file
        name = os.path.basename(tokenizer_file)
        with io_utils.atomic_output(folder, directory=True) as tmp:
            os.makedirs(tmp)
            self.model.config.to_json_file(os.path.join(tmp, "albert_config.json"))
            save_tf1_checkpoint(self.model, os.path.join(tmp, CHECKPOINT))
            shutil.copyfile(tokenizer_file, os.path.join(tmp, name))
            key = "spm_model_file" if self.tokenizer.spm_model_file else "vocab_file"
            write_settings(tmp, {"do_lower_case": bool(self.do_lower_case), key: name})
            files = {EMBEDDING_CONFIG: json.dumps(
                {"pooling": self.pooling, "max_seq_length": self.max_seq_length}, indent=2)}
            for file_name, text in {**files, **(extra_files or {})}.items():
                with open(os.path.join(tmp, file_name), "w", encoding="utf-8") as handle:
                    handle.write(text + "\n")
        return folder
