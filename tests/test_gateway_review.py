"""The gateway's review queue and session routes over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memcore import sessions
from memcore.dream import cycle, review
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from tests.test_gateway_helpers import gateway

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
PORT_OLD = "The API server listens on port 8080."
PORT_NEW = "The API server listens on port 9090."
LINT = "Deploys use Argo CD."
LINT_PATH = (  # no one-statement text keeps both when the short one is the keeper
    "Deploys use Argo CD, synced from the gitops repo every 3 minutes, with manual approval "
    "for prod, and Slack alerts in #deploys."
)


def marker(eid: str, created: str) -> str:
    return f'<!-- memcore:entry id="{eid}" created="{created}" -->\n'


def queue_conflict(ws: Workspace, *, lossy_merge: bool = False) -> None:
    """MEMORY.md with two entries that contradict (8080 vs 9090); ``dream --auto`` queues them."""
    body = (
        "# Long-Term Memory\n\n"
        + marker("old", "2026-01-01")
        + f"- {PORT_OLD}\n"
        + marker("new", "2026-06-01")
        + f"- {PORT_NEW}\n"
    )
    if lossy_merge:
        body += f"- {LINT}\n- {LINT_PATH}\n"
    ws.memory_md.write_text(body, encoding="utf-8")
    if lossy_merge:
        from memcore.dream import tables
        from memcore.recall import ledger
        from memcore.workspace.markdown import text_entry_id

        with tables.connect(ws) as conn:
            keeper = ledger.Meta(id=text_entry_id(LINT), importance=0.9, created_at=str(NOW.date()))
            ledger.save(conn, [keeper])
    res = cycle.run_cycle(ws, now=NOW, mode="auto")
    assert res["reviewPending"] == (2 if lossy_merge else 1)


def ids(ws: Workspace) -> list[str]:
    return [e.id for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]


def test_review_lists_and_resolves_a_conflict(ws: Workspace) -> None:
    queue_conflict(ws)
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.get("/api/review")
        assert res.status_code == 200, res.text
        items = res.json()["items"]
        assert len(items) == 1
        item = items[0]
        assert item["kind"] == "conflict" and item["choices"] == ["a", "b", "both", "skip"]
        assert {item["a"]["text"], item["b"]["text"]} == {PORT_OLD, PORT_NEW}
        assert item["a"]["id"] == "new"  # the newer entry is the likely winner
        assert "8080" in item["reason"] and item["topic"]

        skip = client.post("/api/review", json={"item": item["itemId"], "choice": "skip"})
        assert skip.status_code == 200 and skip.json()["status"] == "pending"
        assert len(client.get("/api/review").json()["items"]) == 1

        res = client.post("/api/review", json={"item": item["itemId"], "choice": "A"})
        assert res.status_code == 200, res.text
        out = res.json()
        assert out["status"] == "resolved" and out["runId"] and out["choice"] == "a"
        assert client.get("/api/review").json()["items"] == []

        again = client.post("/api/review", json={"item": item["itemId"], "choice": "b"})
        assert again.status_code == 400 and "already resolved" in again.json()["error"]
    text = ws.memory_md.read_text(encoding="utf-8")
    assert PORT_NEW in text and PORT_OLD not in text
    assert ids(ws) == ["new"]


def test_review_merge_apply_and_reject(ws: Workspace) -> None:
    queue_conflict(ws, lossy_merge=True)
    with gateway([ws], scheduler=False) as (_, client, _served):
        items = client.get("/api/review").json()["items"]
        merge = next(i for i in items if i["kind"] == "merge")
        conflict = next(i for i in items if i["kind"] == "conflict")
        assert merge["choices"] == ["apply", "reject", "skip"]
        assert "#deploys" in merge["text"]

        wrong = client.post("/api/review", json={"item": merge["itemId"], "choice": "a"})
        assert wrong.status_code == 400 and "not allowed for a merge" in wrong.json()["error"]

        res = client.post("/api/review", json={"item": merge["itemId"], "choice": "apply"})
        assert res.status_code == 200 and res.json()["status"] == "resolved"
        res = client.post("/api/review", json={"item": conflict["itemId"], "choice": "b"})
        assert res.status_code == 200, res.text
        assert client.get("/api/review").json()["items"] == []
    text = ws.memory_md.read_text(encoding="utf-8")
    assert "#deploys" in text and PORT_OLD in text and PORT_NEW not in text
    assert len(ids(ws)) == 2


def test_review_reject_dismisses_a_merge(ws: Workspace) -> None:
    queue_conflict(ws, lossy_merge=True)
    merge = next(i for i in review.pending(ws) if i["kind"] == "merge")
    before = ws.memory_md.read_text(encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.post("/api/review", json={"item": merge["itemId"], "choice": "reject"})
        assert res.status_code == 200 and res.json()["status"] == "dismissed"
        kinds = [i["kind"] for i in client.get("/api/review").json()["items"]]
    assert kinds == ["conflict"]
    assert ws.memory_md.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    ("headers", "body", "status", "message"),
    [
        ({"Authorization": ""}, '{"item": 1, "choice": "a"}', 401, "missing bearer token"),
        ({"Authorization": "Bearer nope"}, '{"item": 1, "choice": "a"}', 401, "wrong bearer"),
        ({"Content-Type": "text/plain"}, '{"item": 1, "choice": "a"}', 415, "application/json"),
        ({"Origin": "http://evil.example"}, '{"item": 1, "choice": "a"}', 403, "Origin"),
        ({"Host": "evil.example:80"}, '{"item": 1, "choice": "a"}', 403, "Host"),
        ({}, '{"item": 1, "choice": "a", "force": true}', 400, "unknown field(s) force"),
        ({}, '{"choice": "a"}', 400, "missing field 'item'"),
        ({}, '{"item": 1}', 400, "missing field 'choice'"),
        ({}, '{"item": "1", "choice": "a"}', 400, "'item' must be an integer"),
        ({}, '{"item": true, "choice": "a"}', 400, "'item' must be an integer"),
        ({}, '{"item": 0, "choice": "a"}', 400, "positive"),
        ({}, '{"item": 1, "choice": "maybe"}', 400, "must be one of"),
        ({}, '{"item": 999, "choice": "a"}', 400, "no review item 999"),
        ({}, "{not json", 400, "not valid JSON"),
    ],
)
def test_review_post_is_checked(ws: Workspace, headers, body, status, message) -> None:
    queue_conflict(ws)
    before = ws.memory_md.read_text(encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        h = {"Content-Type": "application/json", **headers}
        res = client.post("/api/review", content=body, headers=h)
        assert res.status_code == status, res.text
        assert message in res.json()["error"]
        assert len(client.get("/api/review").json()["items"]) == 1
    assert ws.memory_md.read_text(encoding="utf-8") == before


def test_review_conflicts_while_a_run_is_in_progress(ws: Workspace) -> None:
    queue_conflict(ws)
    item = review.pending(ws)[0]["itemId"]
    with gateway([ws], scheduler=False) as (running, client, served):
        guard = running.gateway.scheduler._guards[served[0].name]
        guard.acquire()
        try:
            res = client.post("/api/review", json={"item": item, "choice": "a"})
        finally:
            guard.release()
        assert res.status_code == 409 and "busy" in res.json()["error"]
        assert len(review.pending(ws)) == 1
        assert client.post("/api/review", json={"item": item, "choice": "a"}).status_code == 200
    assert ids(ws) == ["new"]


def test_review_of_edited_entries_is_a_conflict_and_changes_nothing(ws: Workspace) -> None:
    queue_conflict(ws)
    item = review.pending(ws)[0]["itemId"]
    edited = ws.memory_md.read_text(encoding="utf-8").replace("8080", "8081")
    ws.memory_md.write_text(edited, encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.post("/api/review", json={"item": item, "choice": "a"})
        assert res.status_code == 409, res.text
        assert "changed since it was queued" in res.json()["error"]
        assert client.get("/api/review").json()["items"] == []
    assert ws.memory_md.read_text(encoding="utf-8") == edited


def test_review_of_an_empty_workspace(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.get("/api/review")
        assert res.status_code == 200 and res.json()["items"] == []
        assert client.get("/api/review", headers={"Host": "evil.example"}).status_code == 403
        assert client.get("/api/review?workspace=nope").status_code == 404


def write_session(ws: Workspace, name: str, n: int = 6) -> None:
    folder = ws.root / "sessions"
    folder.mkdir(exist_ok=True)
    lines = []
    for j in range(n):
        say = f"We decided to always use ruff for linting in {name}, step {j}."
        lines.append(json.dumps({"role": "user", "content": say, "ts": f"2026-11-20T10:0{j}:00Z"}))
        answer = f"Decision: ruff it is. Lesson: SQLite wants WAL mode ({name} {j})."
        lines.append(
            json.dumps({"role": "assistant", "content": answer, "ts": f"2026-11-20T10:0{j}:30Z"})
        )
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_sessions_route_shows_last_report_and_health(ws: Workspace) -> None:
    ws.memory_md.write_text(
        "# Long-Term Memory\n\n- Prefers tea. See [notes](memory/gone.md).\n- Uses uv.\n",
        encoding="utf-8",
    )
    (ws.memory_dir / "topic.md").write_text("# A topic\n", encoding="utf-8")
    write_session(ws, "alpha")
    write_session(ws, "beta")
    (ws.root / "sessions" / "broken.jsonl").write_bytes(b"\xff\xfe not text")
    with gateway([ws], scheduler=False) as (_, client, _served):
        first = client.get("/api/sessions")
        assert first.status_code == 200, first.text
        assert first.json()["status"]["lastRun"] is None
        assert sorted(first.json()["status"]["candidates"]) == ["alpha", "beta"]
        sessions.dream(ws, now=NOW)
        data = client.get("/api/sessions").json()
    st, health = data["status"], data["health"]
    report = st["lastRun"]["report"]
    assert st["lastRun"]["status"] == "ok"
    assert sorted(r["session"] for r in report["read"]) == ["alpha", "beta"]
    assert any(w.startswith("session:alpha") for w in report["wrote"])
    assert [s["session"] for s in report["skipped"]] == ["broken"]
    assert report["tokens"]["calls"] >= 1
    assert health["missingLinks"] == ["memory/gone.md"]
    assert health["unlinkedTopicFiles"] == ["memory/topic.md"]
    assert health["unverifiedCount"] == 2
    assert health["memoryMd"]["budgetChars"] > health["memoryMd"]["chars"] > 0


def test_sessions_route_reports_a_bad_config_per_part(ws: Workspace) -> None:
    ws.config_path.write_text("[sessions]\nenabled = 3\n", encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.get("/api/sessions")
    assert res.status_code == 200, res.text
    assert "enabled" in res.json()["status"]["error"]
