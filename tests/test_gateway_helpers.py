"""Shared pieces of the gateway tests: a qualifying candidate, a running gateway, a client."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx

from memcore.gateway.server import GatewayOptions, Running, serve_in_thread
from memcore.gateway.workspaces import Served, build_served
from memcore.recall.store import record_recalls
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace

TOKEN = "test-token-123"
FACT = "The staging database password rotates every Monday at 09:00."


def seed_candidate(
    ws: Workspace, now: datetime | None = None, *, text: str = FACT, queries: int = 5
) -> str:
    """A daily note with ``text`` and enough recalls (distinct queries) to pass core's gates."""
    now = now or utcnow()
    day = now.date().isoformat()
    note = ws.memory_dir / f"{day}.md"
    ws.memory_dir.mkdir(parents=True, exist_ok=True)
    note.write_text(f"# {day}\n\n{text}\n\nLunch was good.\n", encoding="utf-8")
    rel = f"memory/{day}.md"
    for i in range(queries):
        record_recalls(
            ws,
            f"question number {i}",
            [{"path": rel, "startLine": 3, "endLine": 3, "score": 0.97, "snippet": text}],
            now=now,
        )
    return f"memory:{rel}:3:3"


def seed_weak(ws: Workspace, now: datetime | None = None) -> str:
    """A recalled snippet that fails the recall-count gate."""
    now = now or utcnow()
    day = now.date().isoformat()
    rel = f"memory/{day}.md"
    record_recalls(
        ws,
        "lunch",
        [{"path": rel, "startLine": 5, "endLine": 5, "score": 0.5, "snippet": "Lunch was good."}],
        now=now,
    )
    return f"memory:{rel}:5:5"


def make_ws(root: Any) -> Workspace:
    ws = Workspace(root)
    (ws.root / "memory").mkdir(parents=True, exist_ok=True)
    return ws


@contextlib.contextmanager
def gateway(
    workspaces: list[Workspace], **opts: Any
) -> Iterator[tuple[Running, httpx.Client, list[Served]]]:
    """A real gateway on a free 127.0.0.1 port, and an httpx client with the token set."""
    served = build_served([(None, w.root) for w in workspaces])
    options = GatewayOptions(host="127.0.0.1", port=0, token=TOKEN, **opts)
    with serve_in_thread(served, options) as running:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=running.url, headers=headers, timeout=30) as client:
            yield running, client, served
