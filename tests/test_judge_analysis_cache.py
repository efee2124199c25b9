"""The analysis cache in a real memcore.sqlite: what it gives back judges exactly like a fresh
analysis, and it never serves an analysis made with other tables."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from memcore.judge.analysis import Analyzer
from memcore.judge.analysis_cache import AnalysisCache, fingerprint
from memcore.judge.candidates import candidates
from memcore.judge.offline import OfflineJudge
from memcore.judge.protocol import EntryView
from memcore.search.embeddings import get_embedder
from memcore.workspace import db

_FRAMES = [
    "{P}'s {env}{thing} listens on port {n}.",
    "{P} {thing} now runs {w} replicas.",
    "The {thing} of {P} moved from /srv/{p}/v{n} to /opt/{p}.",
    "{P} deploys with TF (Terraform) {n}.{w2} every weekday.",
    "Kofi's {thing} times out after {n} seconds in staging.",
    "Le {thing} de {P} écoute sur le port {n}.",
    "{P} no longer uses `{p}-{n}.yaml` for the {thing}.",
    "{P}の{thing}はポート{n}を使います。",
]


def _texts(n: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for _ in range(n):
        p = rng.choice(["atlas", "orbit", "quill", "harbor", "nova"])
        out.append(
            rng.choice(_FRAMES).format(
                P=p.capitalize(),
                p=p,
                env=rng.choice(["", "staging ", "production "]),
                thing=rng.choice(["API", "worker", "cache", "scheduler"]),
                n=rng.randint(1, 60),
                w=rng.choice(["three", "four", "6"]),
                w2=rng.randint(0, 9),
            )
        )
    return out


def _verdicts(views: list[EntryView], analyzer: Analyzer) -> list[tuple[object, ...]]:
    texts = [v.text for v in views]
    emb = get_embedder("hashing").fit(texts)  # type: ignore[attr-defined]
    vecs = np.asarray(emb.embed(texts))
    judge = OfflineJudge(emb, analyzer)
    judge.remember(texts, vecs)
    pairs = [(views[c.i], views[c.j]) for c in candidates(views, vecs, analyzer)]
    return [
        (a.id, b.id, j.verdict, j.reason, j.confidence, j.newer)
        for (a, b), j in zip(pairs, judge.judge(pairs), strict=True)
    ]


def test_stored_analyses_judge_exactly_like_fresh_ones(tmp_path: Path) -> None:
    texts = _texts(400)
    views = [EntryView(f"e{i}", t, created_at=f"2026-0{1 + i % 9}-01") for i, t in enumerate(texts)]
    conn = db.connect(tmp_path / "memcore.sqlite")
    fresh = Analyzer.for_texts(texts)
    before = _verdicts(views, fresh)
    assert AnalysisCache(conn).store(fresh, texts) == len(set(texts))

    again = Analyzer.for_texts(texts)
    cache = AnalysisCache(conn)
    assert cache.load(again, texts) == len(set(texts))
    for t in texts:
        loaded, made = again.analyse(t), fresh.analyse(t)
        assert loaded == made
        assert loaded.features.content_set == made.features.content_set
    assert _verdicts(views, again) == before
    assert cache.store(again, texts) == 0  # nothing new to write


def test_other_tables_read_nothing_and_old_rows_go(tmp_path: Path) -> None:
    texts = _texts(50)
    conn = db.connect(tmp_path / "memcore.sqlite")
    first = Analyzer.for_texts(texts)
    AnalysisCache(conn).store(first, texts)
    grown = [*texts, "Zephyr keeps QX (quantum xylophone) on the pager."]
    second = Analyzer.for_texts(grown)  # a new alias: other tables for every text
    assert fingerprint(second) != fingerprint(first)
    cache = AnalysisCache(conn)
    assert cache.load(second, grown) == 0
    cache.store(second, grown)
    rows = conn.execute("SELECT COUNT(*) FROM judge_analyses").fetchone()[0]
    assert rows == len(set(grown))  # the rows of the first fingerprint are gone
    assert AnalysisCache(conn).load(Analyzer.for_texts(grown), grown) == len(set(grown))


def test_a_row_that_does_not_decode_is_analysed_again(tmp_path: Path) -> None:
    texts = _texts(5)
    conn = db.connect(tmp_path / "memcore.sqlite")
    an = Analyzer.for_texts(texts)
    AnalysisCache(conn).store(an, texts)
    conn.execute("UPDATE judge_analyses SET data = ?", (b"{not json",))
    again = Analyzer.for_texts(texts)
    cache = AnalysisCache(conn)
    assert cache.load(again, texts) == 0
    assert again.analyse(texts[0]) == an.analyse(texts[0])
    assert cache.store(again, texts) == len(set(texts))


def test_a_name_learned_elsewhere_reanalyses_only_the_entries_that_write_it(
    tmp_path: Path,
) -> None:
    texts = [
        "Atlas listens on port 9100.",  # "Atlas" opens the sentence: a name only if learned
        "The cache of Quill times out after 30 seconds.",
        "Deploys happen every weekday at 09:00.",
    ]
    conn = db.connect(tmp_path / "memcore.sqlite")
    first = Analyzer.for_texts(texts)
    assert "atlas" not in first.names
    AnalysisCache(conn).store(first, texts)
    grown = [*texts, "We moved the metrics of Atlas to Grafana."]  # "Atlas" mid-sentence
    second = Analyzer.for_texts(grown)
    assert "atlas" in second.names and fingerprint(second) != fingerprint(first)
    cache = AnalysisCache(conn)
    assert cache.load(second, grown) == 2  # the Quill and weekday entries, not Atlas's
    fresh = Analyzer.for_texts(grown)
    for t in grown:
        assert second.analyse(t) == fresh.analyse(t)
    assert second.analyse(texts[0]) != first.analyse(texts[0])  # now "Atlas" is a name
    assert cache.store(second, grown) == 2  # the re-analysed Atlas entry and the new one
