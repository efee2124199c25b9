"""The agent as the judge: what waits for a decision, and the agent's decisions on it.

An agent that uses memcore already has a model, so it can judge with no API key.
:func:`pending` lists, a page at a time, the review queue's items and the candidate pairs that
the offline judge does not find unrelated and the agent has not judged yet: both texts, their
metadata, memcore's analysis and verdict, and what may be answered. :func:`decide` takes one
decision per item: a verdict (and, for ``same``, optionally a merged text) for a pair; ``a`` /
``b`` / ``both`` for a conflict; ``apply`` / ``reject`` or a merged text for a merge.

Every decision goes through the checks a model's answer goes through
(:mod:`memcore.judge.validate`: details kept, the scope wall, a pinned entry never removed).
The accepted ones are applied as **one** journaled run (``memcore undo`` takes it back); an
item that is unknown, stale (an entry changed since it was listed), refused by a check, or
touches an entry an earlier decision of the same call already changes, is skipped with its
reason. Nothing is applied half-way: when MEMORY.md changes under the call, nothing is.

Item ids: ``pair:<id a>:<id b>:<content key>`` (the key changes when either entry's text or
metadata does) and ``review:<item id>``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime
from typing import Any

from memcore.dream import judging, review, tables
from memcore.dream.apply import MergeOp, Op, RemoveOp, apply_ops
from memcore.dream.merge import keeper_of
from memcore.dream.settings import consolidation_settings
from memcore.errors import InputError, StalePlan
from memcore.journal import runs as journal
from memcore.judge.analysis import Analyzer
from memcore.judge.merge_text import merge_text
from memcore.judge.protocol import (
    VERDICTS,
    EntryView,
    Judgement,
    Verdict,
    VerdictCache,
    judge_cached,
    pair_key,
)
from memcore.judge.validate import APPLY, check_merge, check_pair
from memcore.recall import ledger
from memcore.recall.ledger import Meta
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import Document, Entry, parse

AGENT_JUDGE = "agent-1"
MAX_PAGE = 100
MAX_DECISIONS = 200


def _entry_json(e: Entry, m: Meta, an: Analyzer) -> dict[str, Any]:
    return {
        "id": e.id,
        "text": e.text,
        "type": m.type,
        "scope": m.scope,
        "created": m.created_at[:10],
        "pinned": m.pinned,
        "importance": round(m.importance, 3),
        "analysis": an.analyse(e.text).to_json(),
    }


def _state(
    ws: Workspace, conn: sqlite3.Connection, now: datetime
) -> tuple[Document, dict[str, Meta], list[EntryView], Analyzer]:
    doc = parse(ledger.read_memory(ws))
    metas = ledger.metas_for(conn, doc, now)
    views = [judging.view(e, metas[e.id]) for e in doc.entries]
    return doc, metas, views, Analyzer.for_texts(v.text for v in views)


def _key(a: EntryView, b: EntryView) -> str:
    return pair_key(a, b)[:12]


def pending(
    ws: Workspace, *, now: datetime, cursor: str | None = None, limit: int = 20
) -> dict[str, Any]:
    """One page of what waits for the agent (see the module docstring). ``cursor`` is the
    ``next`` of the previous page; a cursor from another MEMORY.md is an InputError."""
    from memcore.dream.plan import _embed
    from memcore.judge.candidates import candidates

    if not 1 <= limit <= MAX_PAGE:
        raise InputError(f"limit must be from 1 to {MAX_PAGE}, got {limit}")
    with tables.connect(ws) as conn:
        doc, metas, views, an = _state(ws, conn, now)
        offset = 0
        if cursor:
            sha, _, off = cursor.partition(":")
            if sha != doc.sha1[:12] or not off.isdigit():
                raise InputError(
                    "cursor is stale: MEMORY.md changed since that page; call dream_pending "
                    "again without a cursor"
                )
            offset = int(off)
        items: list[dict[str, Any]] = []
        for it in review.pending(ws):
            choices = list(it["choices"])
            if it["kind"] == "conflict":
                choices = [c for c in choices if c != "skip"]
            else:
                choices = [c for c in choices if c != "skip"]
            items.append(
                {
                    **{k: v for k, v in it.items() if k not in ("choices", "status")},
                    "item": f"review:{it['itemId']}",
                    "allowed": {"choice": choices, "merged_text": it["kind"] == "merge"},
                }
            )
        if len(views) > 1:
            settings = consolidation_settings(load_config(ws))
            emb, vecs = _embed([v.text for v in views], settings, conn, True)
            cands = candidates(views, vecs, an)
            pairs = [(views[c.i], views[c.j]) for c in cands]
            judge = judging.make_judge(
                ws, replace(settings, judge="offline"), emb, an, [v.text for v in views], vecs
            )
            first = judge_cached(judge.offline, pairs, conn)
            done = VerdictCache(conn).get_many(AGENT_JUDGE, pairs)
            entries = doc.entries
            for n, (c, j) in enumerate(zip(cands, first, strict=True)):
                if n in done or j.verdict is Verdict.UNRELATED:
                    continue
                a, b = views[c.i], views[c.j]
                items.append(
                    {
                        "item": f"pair:{a.id}:{b.id}:{_key(a, b)}",
                        "kind": "pair",
                        "a": _entry_json(entries[c.i], metas[a.id], an),
                        "b": _entry_json(entries[c.j], metas[b.id], an),
                        "memcore": {
                            "verdict": j.verdict.value if j.verdict else None,
                            "reason": j.reason,
                            "confidence": j.confidence,
                        },
                        "allowed": {
                            "verdict": list(VERDICTS),
                            "newer": ["a", "b"],
                            "merged_text": "for same: one entry that keeps every detail of both",
                        },
                    }
                )
    page = items[offset : offset + limit]
    nxt = offset + limit
    return {
        "items": page,
        "total": len(items),
        "next": f"{doc.sha1[:12]}:{nxt}" if nxt < len(items) else None,
    }


class _Call:
    """The accepted operations of one ``decide`` call and what it reports."""

    def __init__(self, doc: Document, metas: dict[str, Meta], views: list[EntryView]) -> None:
        self.doc, self.metas = doc, metas
        self.by_id = doc.by_id()
        self.views = {v.id: v for v in views}
        self.ops: list[Op] = []
        self.touched: set[str] = set()
        self.applied: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.marks: list[tuple[int, str]] = []
        self.verdicts: list[tuple[EntryView, EntryView, Judgement]] = []
        self.queue: list[tuple[str, dict[str, Any]]] = []

    def skip(self, item: Any, reason: str) -> None:
        self.skipped.append({"item": item, "reason": reason})

    def free(self, item: str, *ids: str) -> bool:
        busy = [i for i in ids if i in self.touched]
        if busy:
            self.skip(item, f"an earlier decision of this call already changes {busy[0]}")
            return False
        return True

    def merge(self, item: str, members: list[str], keeper: str, text: str, why: str) -> None:
        k = self.by_id[keeper]
        km = self.metas[keeper]
        others = [self.by_id[m] for m in members if m != keeper]
        group = [self.metas[e.id] for e in others]
        after = replace(
            km,
            importance=min(
                1.0, round(max([km.importance, *(m.importance for m in group)]) + 0.05, 6)
            ),
            access_count=km.access_count + sum(m.access_count for m in group),
            last_accessed_at=max(
                (m.last_accessed_at for m in [km, *group] if m.last_accessed_at), default=None
            ),
        )
        self.ops.append(
            MergeOp(
                keeper,
                k.raw,
                [(e.id, e.raw) for e in others],
                None if text.strip() == k.text.strip() else text,
                after,
                {e.id: self.metas[e.id] for e in [k, *others]},
                why,
            )
        )
        self.touched.update(members)
        self.applied.append({"item": item, "action": "merge", "keeper": keeper, "text": text})

    def remove(self, item: str, loser: str, why: str, action: str) -> None:
        e = self.by_id[loser]
        self.ops.append(RemoveOp("reconcile", loser, e.raw, why, self.metas.get(loser)))
        self.touched.add(loser)
        self.applied.append({"item": item, "action": action, "removed": loser})


def _decide_pair(call: _Call, item: str, d: dict[str, Any], an: Analyzer) -> None:
    parts = item.split(":")
    if len(parts) != 4:
        call.skip(item, "unknown item: a pair id is pair:<id a>:<id b>:<key>")
        return
    _, ia, ib, key = parts
    a, b = call.views.get(ia), call.views.get(ib)
    if a is None or b is None:
        call.skip(item, f"unknown item: no entry {ia if a is None else ib} in MEMORY.md")
        return
    if _key(a, b) != key:
        call.skip(item, "stale: an entry of the pair changed since dream_pending")
        return
    verdict = d.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
        call.skip(item, f"verdict {verdict!r} is not allowed; allowed: {', '.join(VERDICTS)}")
        return
    v = Verdict(verdict.strip().lower())
    side = d.get("newer")
    newer = {"a": a.id, "b": b.id, a.id: a.id, b.id: b.id}.get(str(side)) if side else None
    if v is Verdict.SUPERSEDES and newer is None:
        newer = (
            a.id if a.created_at > b.created_at else b.id if b.created_at > a.created_at else None
        )
    text = d.get("merged_text")
    merged = " ".join(text.split()) if isinstance(text, str) and text.strip() else None
    j = Judgement(v, str(d.get("reason") or "agent")[:300], 1.0, newer, merged)
    if v in (Verdict.RELATED, Verdict.UNRELATED):
        call.verdicts.append((a, b, j))
        call.applied.append({"item": item, "action": "recorded", "verdict": v.value})
        return
    if not call.free(item, a.id, b.id):
        return
    if v is Verdict.SAME:
        keeper = keeper_of([a, b], an)
        other = b if keeper is a else a
        text = merged or merge_text(keeper.text, [other.text], an)
        check = check_merge([a, b], text, keeper.id, an)
        if check.action != APPLY or text is None:
            call.skip(item, f"merge refused: {check.reason}")
            return
        call.verdicts.append((a, b, j))
        call.merge(item, [a.id, b.id], keeper.id, text, f"same fact (agent): {j.reason}")
        return
    check = check_pair(j, a, b, an)
    if v is Verdict.SUPERSEDES:
        if check.action != APPLY or newer is None:
            call.skip(item, f"not applied: {check.reason or 'no newer entry named'}")
            return
        older = b.id if newer == a.id else a.id
        call.verdicts.append((a, b, j))
        call.remove(item, older, f"superseded by {newer} (agent): {j.reason}", "supersede")
        return
    # conflict: it waits for a human, with memcore's suggestion
    call.verdicts.append((a, b, j))
    call.applied.append({"item": item, "action": "queued for review", "verdict": v.value})
    ea, eb = call.by_id[a.id], call.by_id[b.id]
    win, lose = (ea, eb) if newer == a.id else (eb, ea)
    if call.metas[win.id].pinned is False and call.metas[lose.id].pinned:
        win, lose = lose, win
    call.queue.append(
        (
            "conflict",
            {
                "a": {
                    "id": win.id,
                    "text": win.text,
                    "raw": win.raw,
                    "meta": call.metas[win.id].to_json(),
                },
                "b": {
                    "id": lose.id,
                    "text": lose.text,
                    "raw": lose.raw,
                    "meta": call.metas[lose.id].to_json(),
                },
                "topic": "",
                "reason": f"{j.reason} (agent); newer wins unless the older is pinned",
                "suggested": "a",
                "verdict": "conflict",
                "confidence": 1.0,
                "similarity": 0.0,
            },
        )
    )


def _decide_review(
    call: _Call, conn: sqlite3.Connection, item: str, d: dict[str, Any], an: Analyzer
) -> None:
    num = item.split(":", 1)[1]
    if not num.isdigit():
        call.skip(item, "unknown item: a review id is review:<number>")
        return
    try:
        it = review.get_item(conn, int(num))
    except InputError:
        call.skip(item, f"unknown item: no review item {num}")
        return
    if it["status"] != "pending":
        call.skip(item, f"stale: review item {num} is already {it['status']}")
        return
    choice = str(d.get("choice") or "").strip().lower()
    if it["kind"] == "conflict":
        ids = [it["a"]["id"], it["b"]["id"]]
        for side in ("a", "b"):
            e = call.by_id.get(it[side]["id"])
            if e is None or e.raw.rstrip("\r\n") != it[side]["raw"].rstrip("\r\n"):
                call.skip(item, f"stale: entry {it[side]['id']} changed since it was queued")
                return
        if choice == review.KEEP_BOTH:
            call.marks.append((int(num), choice))
            call.applied.append({"item": item, "action": "kept both"})
            return
        if choice not in ("a", "b"):
            call.skip(item, f"choice {choice!r} is not allowed; allowed: a, b, both")
            return
        loser = it["b"] if choice == "a" else it["a"]
        if call.metas[loser["id"]].pinned:
            call.skip(item, f"refused: {loser['id']} is pinned and is never removed")
            return
        if not call.free(item, *ids):
            return
        kept = it["a"]["id"] if choice == "a" else it["b"]["id"]
        call.remove(item, loser["id"], f"conflict resolved for {kept} (agent)", "resolve")
        call.marks.append((int(num), choice))
        return
    members = [it["keeper"]["id"], *(x["id"] for x in it["absorbed"])]
    raws = {it["keeper"]["id"]: it["keeper"]["raw"], **{x["id"]: x["raw"] for x in it["absorbed"]}}
    for mid in members:
        e = call.by_id.get(mid)
        if e is None or e.raw.rstrip("\r\n") != raws[mid].rstrip("\r\n"):
            call.skip(item, f"stale: entry {mid} changed since it was queued")
            return
    if choice == "reject":
        call.marks.append((int(num), "reject"))
        call.applied.append({"item": item, "action": "rejected"})
        return
    text = d.get("merged_text")
    if choice != "apply" and not (isinstance(text, str) and text.strip()):
        call.skip(
            item, f"choice {choice!r} is not allowed; allowed: apply, reject, or a merged_text"
        )
        return
    text = " ".join(text.split()) if isinstance(text, str) and text.strip() else it["text"]
    views = [call.views[m] for m in members]
    check = check_merge(views, text, it["keeper"]["id"], an)
    if isinstance(d.get("merged_text"), str) and check.action != APPLY:
        call.skip(item, f"merged text refused: {check.reason}")
        return
    if not call.free(item, *members):
        return
    call.merge(item, members, it["keeper"]["id"], text, f"merge approved by the agent ({item})")
    call.marks.append((int(num), "apply"))


def decide(
    ws: Workspace,
    decisions: list[dict[str, Any]],
    *,
    now: datetime,
    trigger: str = "mcp",
    lock_timeout: float = 10.0,
) -> dict[str, Any]:
    """Apply the agent's decisions (see the module docstring) as one journaled run."""
    if not isinstance(decisions, list) or not decisions:
        raise InputError("decisions must be a non-empty list of {item, verdict | choice, ...}")
    if len(decisions) > MAX_DECISIONS:
        raise InputError(f"at most {MAX_DECISIONS} decisions per call, got {len(decisions)}")
    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        doc, metas, views, an = _state(ws, conn, now)
        call = _Call(doc, metas, views)
        for d in decisions:
            item = d.get("item") if isinstance(d, dict) else None
            if not isinstance(item, str):
                call.skip(item, "each decision needs an item (a string from dream_pending)")
            elif item.startswith("pair:"):
                _decide_pair(call, item, d, an)
            elif item.startswith("review:"):
                _decide_review(call, conn, item, d, an)
            else:
                call.skip(item, "unknown item: ids start with pair: or review:")
        run_id = None
        if call.ops:
            run_id = journal.new_run_id(now)
            counters = {
                "merged": sum(len(o.absorbed) for o in call.ops if isinstance(o, MergeOp)),
                "removed": sum(1 for o in call.ops if isinstance(o, RemoveOp)),
                "decisions": len(call.applied),
                "skipped": len(call.skipped),
            }
            try:
                apply_ops(
                    ws,
                    conn,
                    call.ops,
                    now=now,
                    run_id=run_id,
                    kind="agent",
                    mode="mcp",
                    counters=counters,
                    expected_sha1=doc.sha1,
                    trigger=trigger,
                )
            except StalePlan as exc:
                return {
                    "applied": [],
                    "skipped": [{"item": d.get("item"), "reason": str(exc)} for d in decisions],
                    "runId": None,
                }
        for num, choice in call.marks:
            status = "resolved" if choice in ("a", "b", "apply") else "dismissed"
            review.mark(conn, num, status, choice, now)
        if call.verdicts:
            VerdictCache(conn).put_many(
                AGENT_JUDGE, [(a, b) for a, b, _ in call.verdicts], [j for _, _, j in call.verdicts]
            )
        if call.queue:
            review.queue(conn, call.queue, run_id, now)
    return {"applied": call.applied, "skipped": call.skipped, "runId": run_id}
