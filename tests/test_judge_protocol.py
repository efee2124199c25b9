"""The judge protocol and the verdict cache in a real memcore.sqlite."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memcore.judge.protocol import (
    EntryView,
    Judge,
    Judgement,
    Pair,
    Verdict,
    VerdictCache,
    judge_cached,
    pair_key,
)
from memcore.workspace import db


class CountingJudge:
    """A judge that records every pair it is asked about (what a model judge would bill)."""

    judge_id = "counting-1"

    def __init__(self, skip: set[str] | None = None) -> None:
        self.seen: list[tuple[str, str]] = []
        self.skip = skip or set()

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        out = []
        for a, b in pairs:
            self.seen.append((a.id, b.id))
            if a.id in self.skip:
                out.append(Judgement.skipped("timed out"))
            else:
                out.append(Judgement(Verdict.SUPERSEDES, "newer wins", 0.9, newer=b.id))
        return out


def view(i: str, text: str, created_at: str = "2026-01-01", pinned: bool = False) -> EntryView:
    return EntryView(i, text, created_at=created_at, pinned=pinned)


def test_pair_key_is_order_independent_and_sees_metadata() -> None:
    a, b = view("a", "Port is 8080."), view("b", "Port is 9090.", created_at="2026-02-01")
    assert pair_key(a, b) == pair_key(b, a)
    assert pair_key(a, b) != pair_key(a, view("b", "Port is 9090."))  # created_at differs
    assert pair_key(a, b) != pair_key(a, view("b", "Port is 9090.", pinned=True))
    assert pair_key(a, b) == pair_key(view("x", "Port is 8080."), b)  # ids do not matter


def test_second_run_with_nothing_new_makes_no_judge_call(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "memcore.sqlite")
    judge = CountingJudge()
    assert isinstance(judge, Judge)
    a, b = view("a", "Port is 8080."), view("b", "Port is 9090.", created_at="2026-02-01")
    c = view("c", "Timeout is 5 s.")
    first = judge_cached(judge, [(a, b), (a, c)], conn)
    assert len(judge.seen) == 2
    conn.close()

    conn = db.connect(tmp_path / "memcore.sqlite")  # a later run
    # same contents, swapped order and new ids: still cached
    a2, b2 = view("a2", "Port is 8080."), view("b2", "Port is 9090.", created_at="2026-02-01")
    again = judge_cached(judge, [(b2, a2), (a2, c)], conn)
    assert len(judge.seen) == 2
    assert again[0].verdict is Verdict.SUPERSEDES and again[0].newer == "b2"
    assert [j.verdict for j in again] == [j.verdict for j in first]
    # one new pair: only that one reaches the judge
    d = view("d", "Retries: 3.")
    judge_cached(judge, [(a2, b2), (c, d)], conn)
    assert judge.seen[2:] == [("c", "d")]


def test_skipped_judgements_are_not_cached(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "memcore.sqlite")
    judge = CountingJudge(skip={"a"})
    a, b = view("a", "Port is 8080."), view("b", "Port is 9090.")
    out = judge_cached(judge, [(a, b)], conn)
    assert out[0].verdict is None and not out[0].ok and out[0].reason == "timed out"
    judge_cached(judge, [(a, b)], conn)
    assert len(judge.seen) == 2  # asked again
    assert VerdictCache(conn).get_many(judge.judge_id, [(a, b)]) == {}


def test_cache_is_per_judge_and_can_be_pruned(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "memcore.sqlite")
    a, b = view("a", "Port is 8080."), view("b", "Port is 9090.")
    cache = VerdictCache(conn)
    cache.put_many("j1", [(a, b)], [Judgement(Verdict.CONFLICT, "two ports", 0.7)])
    assert cache.get_many("j2", [(a, b)]) == {}
    hit = cache.get_many("j1", [(b, a)])[0]
    assert (hit.verdict, hit.reason, hit.newer) == (Verdict.CONFLICT, "two ports", None)
    assert cache.prune("j1") == 1
    assert cache.get_many("j1", [(a, b)]) == {}


def test_many_pairs_are_read_back_in_one_lookup(tmp_path: Path) -> None:
    # more pairs than SQLite allows bound parameters in one statement (999 on old builds)
    conn = db.connect(tmp_path / "memcore.sqlite")
    views = [view(f"e{i}", f"Service {i} listens on port {8000 + i}.") for i in range(1500)]
    pairs = [(views[i], views[i + 1]) for i in range(len(views) - 1)]
    judge = CountingJudge()
    first = judge_cached(judge, pairs, conn)
    again = CountingJudge()
    assert judge_cached(again, pairs, conn) == first
    assert again.seen == []
    assert all(j.newer == b.id for (_a, b), j in zip(pairs, first, strict=True))
