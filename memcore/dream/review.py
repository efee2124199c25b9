"""The review queue: conflicts and detail-losing merges that wait for a human.

``dream --auto`` never resolves a conflict and never applies a merge that would drop a detail
without a model; it queues them here (once: the same pair is not queued again while it
waits). ``memcore review`` and the Dreams page list them with :func:`pending` and settle them
with :func:`resolve`, which applies the choice as a journaled, undoable run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime
from typing import Any

from memcore.dream import tables
from memcore.errors import InputError
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace

#: ``both``: keep both entries as they are (a qualifier makes both true, or nothing tells
#: which is current); the decision is a journaled run and the pair is not proposed again.
KEEP_BOTH = "both"
CONFLICT_CHOICES = ("a", "b", KEEP_BOTH, "skip")
#: ``reject`` (or ``both``) keeps the entries apart; the merge is not proposed again.
MERGE_CHOICES = ("apply", "reject", "skip")


def dedupe_key(kind: str, payload: dict[str, Any]) -> str:
    if kind == "conflict":
        basis = "|".join(sorted([payload["a"]["raw"], payload["b"]["raw"]]))
    else:
        basis = (
            payload["keeper"]["raw"] + "|" + "|".join(sorted(a["raw"] for a in payload["absorbed"]))
        )
    return kind + ":" + hashlib.sha1(basis.encode("utf-8")).hexdigest()


def queue(
    conn: sqlite3.Connection,
    items: list[tuple[str, dict[str, Any]]],
    run_id: str | None,
    now: datetime,
    limit: int | None = None,
) -> tuple[int, int]:
    """Add (kind, payload) items not already waiting (or rejected), in the order given, at most
    ``limit`` new ones; returns (how many were added, how many new ones the limit held back)."""
    added = 0
    over = 0
    for kind, payload in items:
        key = dedupe_key(kind, payload)
        row = conn.execute(
            "SELECT 1 FROM dream_review"
            " WHERE dedupe_key = ? AND status IN ('pending', 'dismissed')",
            (key,),
        ).fetchone()
        if row:
            continue
        if limit is not None and added >= limit:
            over += 1
            continue
        conn.execute(
            "INSERT INTO dream_review (kind, dedupe_key, created_at, run_id, payload)"
            " VALUES (?, ?, ?, ?, ?)",
            (kind, key, iso_ms(now), run_id, json.dumps(payload, ensure_ascii=False)),
        )
        added += 1
    return added, over


def pending_count(conn: sqlite3.Connection) -> int:
    return int(
        conn.execute("SELECT count(*) FROM dream_review WHERE status = 'pending'").fetchone()[0]
    )


def _item(row: sqlite3.Row) -> dict[str, Any]:
    payload = json.loads(row["payload"])
    return {
        "itemId": row["item_id"],
        "kind": row["kind"],
        "createdAt": row["created_at"],
        "runId": row["run_id"],
        "status": row["status"],
        "choices": list(CONFLICT_CHOICES if row["kind"] == "conflict" else MERGE_CHOICES),
        **payload,
    }


def pending(ws: Workspace) -> list[dict[str, Any]]:
    """Items waiting for review, oldest first (for ``memcore review`` and the Dreams page).

    A conflict has ``a`` and ``b`` (``id``, ``text``), ``topic``, ``reason``, ``verdict``
    (conflict or supersedes), ``confidence`` and ``suggested`` ("a": keep A, the newer one
    unless the older is pinned; "both": a pinned older entry, keep both); a merge has
    ``keeper``, ``absorbed`` and the proposed ``text``.
    """

    if not ws.db_path.exists():
        return []
    with tables.connect(ws) as conn:
        rows = conn.execute(
            "SELECT * FROM dream_review WHERE status = 'pending' ORDER BY item_id"
        ).fetchall()
    return [_item(r) for r in rows]


def get_item(conn: sqlite3.Connection, item_id: int) -> dict[str, Any]:
    row = conn.execute("SELECT * FROM dream_review WHERE item_id = ?", (item_id,)).fetchone()
    if row is None:
        raise InputError(f"no review item {item_id}")
    return _item(row)


def mark(
    conn: sqlite3.Connection, item_id: int, status: str, resolution: str, now: datetime
) -> None:
    conn.execute(
        "UPDATE dream_review SET status = ?, resolution = ?, resolved_at = ? WHERE item_id = ?",
        (status, resolution, iso_ms(now), item_id),
    )


def resolve(
    ws: Workspace,
    item_id: int,
    choice: str,
    *,
    now: datetime,
    trigger: str = "command",
    lock_timeout: float | None = None,
) -> dict[str, Any]:
    """Settle one item: conflicts take ``a``/``b``/``both``/``skip``; merges
    ``apply``/``reject`` (or ``both``)/``skip``.

    ``skip`` leaves it waiting; ``both`` (``reject`` for a merge) keeps both entries as they
    are and dismisses the item, so the pair is not proposed again: a journaled run that
    changes no file (``memcore undo`` of it puts the item back in the queue); the others
    apply a journaled run.
    An item whose entries changed since it was queued is marked obsolete and changes nothing.
    LockBusy when the workspace lock is not free within ``lock_timeout`` seconds.
    """
    return _resolve(
        ws, item_id, choice.strip().lower(), now=now, trigger=trigger, lock_timeout=lock_timeout
    )


def _resolve(
    ws: Workspace,
    item_id: int,
    choice: str,
    *,
    now: datetime,
    trigger: str,
    lock_timeout: float | None,
) -> dict[str, Any]:
    """Apply a review decision as its own journaled run (see :func:`resolve`)."""
    from memcore.dream.apply import MergeOp, Op, RemoveOp, apply_ops
    from memcore.errors import StalePlan
    from memcore.journal import runs as journal
    from memcore.recall.ledger import Meta

    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        item = get_item(conn, item_id)
        if item["status"] != "pending":
            raise InputError(f"review item {item_id} is already {item['status']}")
        allowed = item["choices"]
        if choice == KEEP_BOTH and item["kind"] == "merge":
            choice = "reject"  # a merge kept apart keeps both entries
        if choice not in allowed:
            raise InputError(
                f"choice {choice!r} is not allowed for a {item['kind']}; "
                f"allowed: {', '.join(allowed)}" + (", both" if item["kind"] == "merge" else "")
            )
        if choice == "skip":
            return {"itemId": item_id, "status": "pending", "runId": None}
        if choice in (KEEP_BOTH, "reject"):
            return _keep_both(ws, conn, item, choice, now=now, trigger=trigger)
        ops: list[Op]
        if item["kind"] == "conflict":
            loser = item["b"] if choice == "a" else item["a"]
            kept = item["a"] if choice == "a" else item["b"]
            meta = loser.get("meta")
            ops = [
                RemoveOp(
                    "reconcile",
                    loser["id"],
                    loser["raw"],
                    f'conflict on "{item["topic"]}" resolved for {kept["id"]}',
                    Meta(**{**meta, "stored": True}) if meta else None,
                )
            ]
        else:
            metas = {k: Meta(**{**v, "stored": True}) for k, v in item["metas"].items()}
            ops = [
                MergeOp(
                    item["keeper"]["id"],
                    item["keeper"]["raw"],
                    [(a["id"], a["raw"]) for a in item["absorbed"]],
                    item["text"],
                    Meta(**{**item["keeperAfter"], "stored": True}),
                    metas,
                    f"merge approved in review (item {item_id})",
                )
            ]
        run_id = journal.new_run_id(now)
        counters = {
            "merged": len(item.get("absorbed", [])),
            "conflictsResolved": int(item["kind"] == "conflict"),
            "reviewItem": item_id,
        }
        try:
            apply_ops(
                ws,
                conn,
                ops,
                now=now,
                run_id=run_id,
                kind="review",
                mode="review",
                counters=counters,
                trigger=trigger,
            )
        except StalePlan:
            mark(conn, item_id, "obsolete", choice, now)
            raise StalePlan(
                f"the entries of review item {item_id} changed since it was queued; "
                "it was dismissed and nothing changed"
            ) from None
        mark(conn, item_id, "resolved", choice, now)
        return {"itemId": item_id, "status": "resolved", "runId": run_id}


def _entry_ids(item: dict[str, Any]) -> list[str]:
    if item["kind"] == "conflict":
        return [item["a"]["id"], item["b"]["id"]]
    return [item["keeper"]["id"], *(a["id"] for a in item["absorbed"])]


def _keep_both(
    ws: Workspace,
    conn: sqlite3.Connection,
    item: dict[str, Any],
    choice: str,
    *,
    now: datetime,
    trigger: str,
) -> dict[str, Any]:
    """Keep every entry of ``item`` as it is: the item is dismissed (never queued again while
    the entries keep their text) by a journaled run that writes no file; undoing that run
    puts the item back in the queue."""
    from memcore.journal import runs as journal
    from memcore.journal import wal

    item_id = int(item["itemId"])
    run_id = journal.new_run_id(now)
    ids = _entry_ids(item)

    def finish(c: sqlite3.Connection) -> None:
        mark(c, item_id, "dismissed", choice, now)

    wal.commit_run(
        ws,
        conn,
        wal.RunSpec(
            run_id,
            "review",
            "review",
            now,
            trigger,
            counters={"keptBoth": len(ids), "reviewItem": item_id, "entries": ids},
        ),
        {},
        finish=finish,
    )
    return {"itemId": item_id, "status": "dismissed", "runId": run_id}


def reopen(conn: sqlite3.Connection, counters: dict[str, Any]) -> None:
    """Put the review item a decision run settled back in the queue (when that run is
    undone)."""
    item_id = counters.get("reviewItem")
    if isinstance(item_id, int):
        conn.execute(
            "UPDATE dream_review SET status = 'pending', resolution = NULL, resolved_at = NULL"
            " WHERE item_id = ? AND status IN ('resolved', 'dismissed')",
            (item_id,),
        )
