"""The built-in hashing embedder: no model, deterministic, instant.

Recipe (the variant that measured best in offline comparisons): lower-case the text, take
Unicode word tokens (``\\w+``, so accents, Cyrillic or CJK runs work too), drop a small
stop-word list, and emit two kinds of features per token: the word itself and the character
3- and 4-grams of ``<word>`` (``<`` and ``>`` mark the boundaries). Each feature is hashed
with ``zlib.crc32`` (never Python's salted ``hash()``) into 4096 buckets; the top bit of the
hash gives a +1/-1 sign so collisions cancel instead of piling up. A feature's weight is
``1 + log(tf)`` times the IDF of its bucket; rows are L2-normalised.

IDF is over buckets: ``idf = log((1 + N) / (1 + df)) + 1`` with ``df`` the number of texts
that touch a bucket. An unfitted embedder uses idf = 1. Because the IDF changes when the
corpus changes, :meth:`HashingEmbedder.raw` exposes the IDF-free sparse vector so an index can
store it once and apply the current IDF at query time, and :attr:`HashingEmbedder.cache_id`
carries a fingerprint of the IDF so a vector cache never serves vectors of another fit.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

DIM = 4096
_MASK = DIM - 1
_SIGN_BIT = 1 << 31
_TOKEN_RE = re.compile(r"\w+", re.UNICODE)

_STOP = """a about after again all also an and any are as at be because been both but by can
could did do does doing each few for from had has have he her here his how i if in into is it
its just me more most my of on or other our own same she should so some such than that the
their them then there these they this those to too very was we were what when where which while
who whom why will with would you your"""
STOP_WORDS = frozenset(_STOP.split())
# "no" and "not" are deliberately kept as features: a negation changes what a memory says.


_CJK_RUN_RE = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")


def tokens(text: str) -> list[str]:
    """Lower-cased Unicode word tokens with stop words removed (underscores split words).

    Chinese and Japanese runs have no spaces between words: they become character bigrams.
    """
    lowered = text.lower()
    cjk = _CJK_RUN_RE.search(lowered) is not None
    out: list[str] = []
    for tok in _TOKEN_RE.findall(lowered):
        for part in tok.split("_") if "_" in tok else (tok,):
            if not part or part in STOP_WORDS:
                continue
            if cjk and _CJK_RUN_RE.search(part):
                out.extend(_split_cjk(part))
            else:
                out.append(part)
    return out


def _split_cjk(word: str) -> list[str]:
    out: list[str] = []
    for piece in _CJK_RUN_RE.split(word):
        if not piece:
            continue
        if _CJK_RUN_RE.fullmatch(piece) and len(piece) > 2:
            out.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        else:
            out.append(piece)
    return out


@lru_cache(maxsize=65536)
def _word_features(word: str) -> np.ndarray:
    """crc32 hashes (uint32) of one word's features: the word and its boundary-marked n-grams."""
    feats = ["w:" + word]
    marked = f"<{word}>"
    for n in (3, 4):
        if len(marked) >= n:
            feats.extend(marked[i : i + n] for i in range(len(marked) - n + 1))
    return np.fromiter((zlib.crc32(f.encode("utf-8")) for f in feats), dtype=np.uint32)


@lru_cache(maxsize=65536)
def _token_features(token: str) -> np.ndarray:
    """The feature hashes of one ``\\w+`` match of lower-cased text, as :func:`tokens` expands
    it (split at underscores, stop words dropped, CJK runs in bigrams): the same for every
    text, since only a token with CJK characters in it is split into bigrams."""
    words: list[str] = []
    for part in token.split("_") if "_" in token else (token,):
        if not part or part in STOP_WORDS:
            continue
        words.extend(_split_cjk(part) if _CJK_RUN_RE.search(part) else (part,))
    if len(words) == 1:
        return _word_features(words[0])
    return np.concatenate([_word_features(w) for w in words] or [np.zeros(0, np.uint32)])


_BATCH = 2048  # texts per block in the batch paths


def _raw_block(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IDF-free raw vectors of some texts as sparse triples sorted by (text, bucket):
    (text index, bucket, weight), zero weights left out.

    Each distinct word's feature hashes are looked up once; every occurrence's are gathered
    with one index array. A feature is keyed ``text << 32 | bucket << 20 | hash >> 12`` (the
    bucket is the hash's low 12 bits, so the key still names the feature), so one sort gives
    both the term frequencies and the (text, bucket) cells in order, and each cell's weights
    add up in ascending hash order, as they always did."""
    vocab: dict[str, int] = {}
    word_ids: list[int] = []
    counts: list[int] = []
    find = _TOKEN_RE.findall
    for text in texts:
        toks = find(text.lower())  # raw matches: each expands as tokens() would
        counts.append(len(toks))
        word_ids.extend([vocab.setdefault(w, len(vocab)) for w in toks])
    if not word_ids:
        return np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.float64)
    feats = [_token_features(w) for w in vocab]
    flen = np.fromiter(map(len, feats), dtype=np.intp, count=len(feats))
    foff = np.cumsum(flen) - flen
    wid = np.asarray(word_ids, dtype=np.intp)
    per = flen[wid]  # features of each occurrence
    total = int(per.sum())
    if total == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.float64)
    first = np.cumsum(per) - per  # where each occurrence's features start in the output
    gather = np.arange(total, dtype=np.intp) + np.repeat(foff[wid] - first, per)
    hashes = np.concatenate(feats).astype(np.uint64)[gather]
    occ_doc = np.repeat(np.arange(len(texts), dtype=np.uint64), counts)
    doc = np.repeat(occ_doc, per)
    key = (
        (doc << np.uint64(32))
        | ((hashes & np.uint64(_MASK)) << np.uint64(20))
        | (hashes >> np.uint64(12))
    )
    keys, tf = np.unique(key, return_counts=True)
    negative = (keys >> np.uint64(19)) & np.uint64(1)  # the hash's top bit
    weights = (1.0 + np.log(tf)) * np.where(negative, -1.0, 1.0)
    flat = (keys >> np.uint64(20)).astype(np.intp)  # text * DIM + bucket, ascending
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    cells, sums = flat[starts], np.add.reduceat(weights, starts)
    keep = sums != 0
    cells, sums = cells[keep], sums[keep]
    return cells // DIM, cells % DIM, sums


def raw_features_many(texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`raw_features` of many texts, computed in blocks (much faster than one by one)."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for start in range(0, len(texts), _BATCH):
        part = texts[start : start + _BATCH]
        doc, bucket, val = _raw_block(part)
        bounds = np.searchsorted(doc, np.arange(len(part) + 1))
        b16, v32 = bucket.astype(np.uint16), val.astype(np.float32)
        out.extend((b16[lo:hi], v32[lo:hi]) for lo, hi in itertools.pairwise(bounds))
    return out


def raw_features(text: str) -> tuple[np.ndarray, np.ndarray]:
    """IDF-free sparse vector of ``text``: (sorted unique bucket indices, signed weights).

    A feature seen ``tf`` times weighs ``1 + log(tf)``; its bucket is the low 12 bits of its
    crc32 and its sign the top bit. Features sharing a bucket add up with their signs. The
    vector is not normalised.
    """
    return raw_features_many([text])[0]


def idf_from_df(df: np.ndarray, n_docs: int) -> np.ndarray:
    """Smoothed bucket IDF: ``log((1 + N) / (1 + df)) + 1`` (float32, one per bucket)."""
    df = np.asarray(df, dtype=np.float64)
    return (np.log((1.0 + n_docs) / (1.0 + df)) + 1.0).astype(np.float32)


def doc_freq(
    texts: Sequence[str], blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
) -> tuple[np.ndarray, int]:
    """Bucket document frequencies of texts, and their number (``blocks``: gets the raw
    blocks of :data:`_BATCH` texts, for a caller that embeds the same texts next)."""
    df = np.zeros(DIM, dtype=np.int64)
    for start in range(0, len(texts), _BATCH):
        block = _raw_block(texts[start : start + _BATCH])
        df += np.bincount(block[1], minlength=DIM)
        if blocks is not None:
            blocks.append(block)
    return df, len(texts)


class HashingEmbedder:
    """Hashed word + character 3/4-gram vectors, IDF-weighted, 4096 dimensions."""

    id = "hashing-v1-4096"
    dim = DIM
    #: Cosine above which two MEMORY.md entries are merge candidates (midpoint between the
    #: lowest near-duplicate and the highest same-topic pair measured for this recipe; the
    #: consolidation step calibrates it on its labelled pairs).
    default_merge_threshold = 0.56

    def __init__(self, idf: np.ndarray | None = None) -> None:
        self._idf: np.ndarray | None = None
        self._fingerprint = ""
        # the texts of the last fit and their raw blocks (the dream embeds what it fitted on)
        self._fitted: tuple[list[str], list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = ([], [])
        if idf is not None:
            self.set_idf(idf)

    @property
    def idf(self) -> np.ndarray:
        """Bucket IDF weights (ones when unfitted)."""
        return self._idf if self._idf is not None else np.ones(DIM, dtype=np.float32)

    @property
    def cache_id(self) -> str:
        """Key for cached vectors: the backend id plus a fingerprint of the fitted IDF."""
        return f"{self.id}+idf:{self._fingerprint}" if self._fingerprint else self.id

    def set_idf(self, idf: np.ndarray) -> None:
        arr = np.asarray(idf, dtype=np.float32)
        if arr.shape != (DIM,):
            raise ValueError(f"idf must have shape ({DIM},), got {arr.shape}")
        self._idf = arr.copy()
        # Round before hashing so the fingerprint does not depend on float noise.
        rounded = np.round(arr.astype(np.float64), 4).tobytes()
        self._fingerprint = hashlib.sha1(rounded).hexdigest()[:12]

    def fit(self, texts: Sequence[str]) -> HashingEmbedder:
        """Fit the bucket IDF on a corpus (the memory itself); returns self."""
        texts = list(texts)
        blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        df, n = doc_freq(texts, blocks)
        self.set_idf(idf_from_df(df, n))
        self._fitted = (texts, blocks)  # embedding the same texts next reuses them
        return self

    def raw(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """IDF-free sparse vector (see :func:`raw_features`)."""
        return raw_features(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Dense float32 array (len(texts), 4096) of L2-normalised rows (zero rows stay zero)."""
        texts = list(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        idf = self.idf.astype(np.float64)
        fitted, blocks = self._fitted
        reuse = texts == fitted
        for k, start in enumerate(range(0, len(texts), _BATCH)):
            doc, bucket, val = blocks[k] if reuse else _raw_block(texts[start : start + _BATCH])
            val = val * idf[bucket]
            norms = np.sqrt(np.bincount(doc, weights=val * val, minlength=_BATCH))
            with np.errstate(divide="ignore", invalid="ignore"):
                out[start + doc, bucket] = val / norms[doc]
        return out
