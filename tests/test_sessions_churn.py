"""Less churn: one published version per memory per run, however many batches it took."""

from __future__ import annotations

import json

from memcore.sessions import health_report
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.store import ensure_schema, version_sources
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.test_sessions_cap import NOW, busy_sessions, large_health
from tests.test_sessions_dream import CountingLLM, make_session


def test_one_version_per_memory_per_run(ws: Workspace) -> None:
    busy_sessions(ws, 20)
    large_health(ws)
    long = [
        (
            f"We decided that service {i} listens on port {8000 + i} behind the gateway {i % 7}.",
            "ok",
        )
        for i in range(300)
    ]
    make_session(ws, "long", long, start=NOW.replace(hour=1))
    llm = CountingLLM()
    report = execute(ws, now=NOW, llm=llm, health=health_report(ws, compact=True))
    assert report["status"] == "ok", report
    assert llm.tasks.count("project") >= 2  # the project step took several calls
    (long_read,) = [r for r in report["read"] if r["session"] == "long"]
    assert long_read["calls"] >= 2  # and so did the long session
    conn = connect(ws.db_path)
    ensure_schema(conn)
    try:
        counts = dict(
            conn.execute(
                "SELECT level || ':' || owner, count(*) FROM sess_memories GROUP BY level, owner"
            ).fetchall()
        )
        assert counts[f"project:{project_id(ws)}"] == 1
        assert counts["session:long"] == 1
        assert set(counts.values()) == {1}
        (mid,) = conn.execute("SELECT id FROM sess_memories WHERE owner='long'").fetchone()
        srcs = version_sources(conn, mid)
    finally:
        conn.close()
    # the one version keeps every batch's sources, in order, and no self-reference
    assert [s.kind for s in srcs] == ["messages"] * len(srcs) and len(srcs) >= 2
    assert srcs[0].from_idx == 0 and srcs[-1].to_idx == 600
    refs = [r for r in report["wrote"] if r.startswith("session:long")]
    assert refs == ["session:long@v1"]
    json.dumps(report)
