"""The embedder protocol, the hashing backend, the registry and the vector cache."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memcore.errors import ConfigError
from memcore.search.embeddings import (
    Embedder,
    VectorCache,
    cache_id,
    content_sha1,
    embed_cached,
    get_embedder,
)
from memcore.search.embeddings.hashing import DIM, HashingEmbedder, raw_features, tokens
from memcore.workspace.db import connect


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_embed_shape_dtype_and_unit_rows() -> None:
    e = HashingEmbedder()
    v = e.embed(["Alice owns the billing service.", "Deploys run on Tuesdays.", ""])
    assert v.shape == (3, DIM) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    assert norms[0] == pytest.approx(1.0, abs=1e-5)
    assert norms[1] == pytest.approx(1.0, abs=1e-5)
    assert norms[2] == 0.0  # nothing to embed stays a zero row, never NaN
    assert not np.isnan(v).any()


def test_light_edit_scores_above_merge_threshold_and_unrelated_near_zero() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed(
        [
            "Alice is the owner of the billing service.",
            "Alice owns the billing service.",
            "The staging database runs Postgres 15 on port 5433.",
        ]
    )
    assert cos(a, b) >= e.default_merge_threshold
    assert cos(a, c) < 0.2


def test_tokens_are_unicode_aware_and_drop_stop_words() -> None:
    assert tokens("The Straße in München is closed") == ["straße", "münchen", "closed"]
    assert tokens("Деплой во вторник") == ["деплой", "во", "вторник"]
    assert tokens("payout_id and snake_case") == ["payout", "id", "snake", "case"]
    assert "not" in tokens("do not deploy on Fridays")  # negations stay features


def test_non_english_near_duplicates_are_close() -> None:
    e = HashingEmbedder()
    de = e.embed(["Die Datenbank läuft auf Port 5433.", "Die Datenbank läuft jetzt auf Port 5433."])
    ru = e.embed(["Деплой только по вторникам", "Деплой только по вторникам и четвергам"])
    ja = e.embed(["デプロイは火曜日だけ", "デプロイは火曜日と木曜日だけ"])
    assert cos(de[0], de[1]) > 0.8
    assert cos(ru[0], ru[1]) > 0.6
    assert np.linalg.norm(ja[0]) > 0 and cos(ja[0], ja[1]) > 0.3


def test_vectors_do_not_depend_on_python_hash_seed(tmp_path: Path) -> None:
    code = (
        "import json, sys; from memcore.search.embeddings.hashing import raw_features;"
        "i, v = raw_features('Vectors must not change between runs: crc32, never hash()');"
        "print(json.dumps([i.tolist(), v.tolist()]))"
    )
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outs.append(json.loads(proc.stdout))
    assert outs[0] == outs[1]
    assert len(outs[0][0]) > 20


def test_fit_changes_weights_and_cache_id() -> None:
    corpus = [
        "deploy the billing service on Tuesday",
        "deploy the ledger on Thursday",
        "deploy the frontend on Monday",
        "the ramen place on 5th street is slow",
    ]
    plain = HashingEmbedder()
    fitted = HashingEmbedder().fit(corpus)
    assert np.all(plain.idf == 1.0) and not np.all(fitted.idf == 1.0)
    assert plain.cache_id == plain.id
    assert fitted.cache_id != plain.cache_id and fitted.cache_id.startswith(plain.id)
    assert HashingEmbedder().fit(corpus).cache_id == fitted.cache_id  # deterministic
    # "deploy" is in three of four texts: fitting makes the rare words count more.
    q = "deploy billing"
    p_v, f_v = plain.embed([q, corpus[0], corpus[1]]), fitted.embed([q, corpus[0], corpus[1]])
    gap_plain = cos(p_v[0], p_v[1]) - cos(p_v[0], p_v[2])
    gap_fitted = cos(f_v[0], f_v[1]) - cos(f_v[0], f_v[2])
    assert gap_fitted > gap_plain


def test_embed_equals_normalised_raw_times_idf() -> None:
    e = HashingEmbedder().fit(["one two three", "two three four", "five six"])
    text = "two three five"
    idx, val = raw_features(text)
    dense = np.zeros(DIM, dtype=np.float32)
    dense[idx.astype(int)] = val * e.idf[idx.astype(int)]
    dense /= np.linalg.norm(dense)
    assert np.allclose(e.embed([text])[0], dense, atol=1e-6)


def test_set_idf_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError, match="shape"):
        HashingEmbedder(idf=np.ones(10))


def test_registry() -> None:
    e = get_embedder()
    assert isinstance(e, HashingEmbedder)
    assert isinstance(e, Embedder)
    assert get_embedder("Hashing").id == "hashing-v1-4096"
    assert 0.5 <= e.default_merge_threshold <= 0.99
    with pytest.raises(ConfigError, match="unknown embedding backend 'word2vec'"):
        get_embedder("word2vec")


def test_minilm_is_lazy_and_fails_only_with_a_config_error() -> None:
    """Without the extra (or before memcore.embeddings.onnx exists) asking for it is a
    ConfigError naming the extra; with it, it is an Embedder. Never another exception."""
    if importlib.util.find_spec("memcore.search.embeddings.onnx") is None:
        with pytest.raises(ConfigError, match=r"memcore\[embed\]"):
            get_embedder("minilm")
        return
    try:
        e = get_embedder("minilm")
    except ConfigError as exc:
        assert "minilm" in str(exc)
    else:
        assert isinstance(e, Embedder) and e.id != HashingEmbedder.id


def test_vector_cache_roundtrip(tmp_path: Path) -> None:
    conn = connect(tmp_path / "memcore.sqlite")
    cache = VectorCache(conn)
    vecs = HashingEmbedder().embed(["a fact", "another fact"])
    h1, h2 = content_sha1("a fact"), content_sha1("another fact")
    cache.put_many("hashing-v1-4096", {h1: vecs[0], h2: vecs[1]})
    got = cache.get_many("hashing-v1-4096", [h1, h2, "missing"])
    assert set(got) == {h1, h2}
    assert np.array_equal(got[h1], vecs[0])
    assert cache.get_many("other-backend", [h1]) == {}
    assert cache.prune("hashing-v1-4096", keep={h1}) == 1
    assert set(cache.get_many("hashing-v1-4096", [h1, h2])) == {h1}
    conn.close()


class CountingEmbedder(HashingEmbedder):
    """A real hashing embedder that counts the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.embedded += len(texts)
        return super().embed(texts)


def test_embed_cached_never_embeds_unchanged_text_twice(tmp_path: Path) -> None:
    conn = connect(tmp_path / "memcore.sqlite")
    cache = VectorCache(conn)
    e = CountingEmbedder()
    first = embed_cached(e, ["alpha fact", "beta fact"], cache)
    assert e.embedded == 2
    second = embed_cached(e, ["beta fact", "alpha fact", "gamma fact"], cache)
    assert e.embedded == 3  # only "gamma fact" was new
    assert np.allclose(second[0], first[1]) and np.allclose(second[1], first[0])
    # After a refit the vectors change, so the cache must not serve the old ones.
    e.fit(["alpha fact", "beta fact", "delta"])
    assert cache_id(e) != "hashing-v1-4096"
    third = embed_cached(e, ["alpha fact"], cache)
    assert e.embedded == 4
    assert np.allclose(third[0], e.embed(["alpha fact"])[0])
    conn.close()


def test_batch_paths_equal_one_by_one() -> None:
    from memcore.search.embeddings.hashing import raw_features_many

    base = ["deploy billing on Tuesday", "", "!!!", "データベース 5433", "Alice owns the ledger"]
    texts = [base[i % 5] if i % 5 in (1, 2) else f"{base[i % 5]} n{i % 7}" for i in range(2100)]
    many = raw_features_many(texts)
    for i in (0, 1, 2, 3, 2047, 2048, 2099):
        idx, val = raw_features(texts[i])
        assert np.array_equal(many[i][0], idx) and np.allclose(many[i][1], val)
    e = HashingEmbedder().fit(texts)
    dense = e.embed(texts)
    assert dense.shape == (2100, DIM)
    norms = np.linalg.norm(dense, axis=1)
    assert np.allclose(norms[[0, 3, 4, 2048, 2099]], 1.0, atol=1e-5)
    assert norms[1] == 0.0 and norms[2] == 0.0 and norms[2097] == 0.0
    assert np.allclose(dense[2049], e.embed([texts[2049]])[0], atol=1e-6)
