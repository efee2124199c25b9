"""The gateway over real HTTP on 127.0.0.1: routes, security, workspaces, bad input."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from memcore.errors import PortInUse
from memcore.gateway.server import bind_socket
from memcore.gateway.workspaces import build_served, pick, workspaces_from_user_file
from memcore.recall.store import read_store
from memcore.workspace.core import Workspace
from tests.conftest import invoke, wait_healthy
from tests.test_gateway_helpers import FACT, TOKEN, gateway, make_ws, seed_candidate, seed_weak


def test_status_and_health(ws: Workspace) -> None:
    seed_candidate(ws)
    ws.memory_md.write_text("# Long-Term Memory\n\n- one\n- two\n", encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        assert client.get("/healthz").json()["ok"] is True
        st = client.get("/api/status").json()
    assert st["shortTermCount"] == 1
    assert st["longTermCount"] == 2
    assert st["promotedTotal"] == 0 and st["promotedToday"] == 0
    assert st["mode"] == "off" and st["nextRunAt"] is None
    assert st["storeHealth"]["entries"] == 1
    for key in ("minScore", "minRecallCount", "minUniqueQueries", "limit", "lastRun", "jobs"):
        assert key in st


def test_dream_now_promotes_and_is_recorded(ws: Workspace) -> None:
    seed_candidate(ws)
    seed_weak(ws)
    with gateway([ws], scheduler=False) as (_, client, _served):
        cands = client.get("/api/candidates").json()
        assert cands["qualifying"] == 1 and cands["total"] == 2
        weak = next(c for c in cands["candidates"] if not c["qualifies"])
        assert weak["failedGate"] == "recallCount"
        assert set(weak["components"]) == {"frequency", "relevance", "diversity", "recency"}

        res = client.post("/api/memories/dream", json={})
        assert res.status_code == 200, res.text
        stats = res.json()
        for key in (
            "promoted",
            "merged",
            "decayed",
            "forgotten",
            "remaining",
            "durationMs",
            "ranAt",
        ):
            assert key in stats
        assert stats["promoted"] == 1
        st = client.get("/api/status").json()
        assert st["promotedTotal"] == 1 and st["promotedToday"] == 1
        runs = client.get("/api/runs").json()["runs"]
    assert runs[0]["job"] == "dream" and runs[0]["status"] == "ok"
    assert runs[0]["result"]["promoted"] == 1
    assert FACT in ws.memory_md.read_text(encoding="utf-8")


def test_dream_conflict_while_running(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (running, client, served):
        guard = running.gateway.scheduler._guards[served[0].name]
        guard.acquire()
        try:
            res = client.post("/api/memories/dream", json={})
        finally:
            guard.release()
        assert res.status_code == 409 and "busy" in res.json()["error"]
        assert client.post("/api/memories/dream", json={}).status_code == 200


def test_promote_preview_and_apply(ws: Workspace) -> None:
    key = seed_candidate(ws)
    with gateway([ws], scheduler=False) as (_, client, _served):
        prev = client.post("/api/memories/promote", json={"apply": False}).json()
        assert [c["key"] for c in prev["candidates"]] == [key] and prev["apply"] is None
        assert not ws.memory_md.exists()
        res = client.post("/api/memories/promote", json={"apply": True, "limit": 5}).json()
    assert res["apply"]["applied"] == 1
    assert read_store(ws).entries[key].get("promotedAt")


def test_search_records_recalls(ws: Workspace) -> None:
    (ws.memory_dir / "2026-11-01.md").write_text(
        "# Notes\n\nThe espresso machine descaling happens on Fridays.\n", encoding="utf-8"
    )
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.post("/api/memories/search", json={"query": "espresso descaling", "limit": 5})
        assert res.status_code == 200, res.text
        body = res.json()
    assert body["results"] and body["recorded"] >= 1
    entries = read_store(ws).entries
    assert any(e["recallCount"] == 1 for e in entries.values())


def test_mode_switch_writes_config_and_schedules(ws: Workspace) -> None:
    ws.config_path.write_text('# mine\n[dreaming]\ntimezone = "Europe/Berlin"\n', encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.post("/api/commands", json={"text": "/dreaming rem"})
        assert res.status_code == 200
        assert res.json()["reply"].startswith("Dreaming mode set to rem.")
        st = client.get("/api/status").json()
    assert tomllib.loads(ws.config_path.read_text(encoding="utf-8"))["dreaming"]["mode"] == "rem"
    assert "# mine" in ws.config_path.read_text(encoding="utf-8")
    assert st["mode"] == "rem" and st["cron"] == "0 */6 * * *"
    assert st["nextRunAt"]["timezone"] == "Europe/Berlin"
    assert st["nextRunAt"]["utc"].endswith("Z") and st["nextRunAt"]["local"][-6:] in (
        "+01:00",
        "+02:00",
    )


def test_invalid_config_keeps_last_good_schedule(ws: Workspace) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "deep"\ntimezone = "UTC"\n', encoding="utf-8")
    with gateway([ws], scheduler=False) as (_, client, _served):
        good = client.get("/api/status").json()
        ws.config_path.write_text(
            '[dreaming]\nmode = "deep"\ntimezone = "Nowhere/City"\n', encoding="utf-8"
        )
        bad = client.get("/api/status").json()
        page = client.get("/").text
    assert good["configError"] is None and good["nextRunAt"]
    assert "Nowhere/City" in bad["configError"]
    assert bad["mode"] == "deep" and bad["nextRunAt"] == good["nextRunAt"]
    assert bad["scheduleNote"]
    assert 'id="alert"' in page


@pytest.mark.parametrize(
    ("headers", "body", "status", "message"),
    [
        ({"Authorization": ""}, "{}", 401, "missing bearer token"),
        ({"Authorization": "Bearer nope"}, "{}", 401, "wrong bearer token"),
        ({"Content-Type": "text/plain"}, "{}", 415, "application/json"),
        ({"Origin": "http://evil.example"}, "{}", 403, "Origin"),
        ({"Origin": "null"}, "{}", 403, "Origin"),
        ({"Host": "evil.example:80"}, "{}", 403, "Host"),
        ({}, "{not json", 400, "not valid JSON"),
        ({}, "[1, 2]", 400, "JSON object"),
        ({}, '{"bogus": 1}', 400, "unknown field"),
        ({}, '{"workspace": true}', 400, "must be"),
        ({}, "x" * 70_000, 413, "too large"),
    ],
)
def test_mutating_requests_are_checked(ws: Workspace, headers, body, status, message) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        h = {"Content-Type": "application/json", **headers}
        res = client.post("/api/memories/dream", content=body, headers=h)
        assert res.status_code == status, res.text
        assert message in res.json()["error"]
        assert not ws.memory_md.exists()


def test_field_types_and_ranges(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        cases = [
            ("/api/memories/promote", {"apply": 1}),
            ("/api/memories/promote", {"limit": "5"}),
            ("/api/memories/promote", {"limit": True}),
            ("/api/memories/promote", {"limit": -1}),
            ("/api/memories/search", {}),
            ("/api/memories/search", {"query": "  "}),
            ("/api/memories/search", {"query": "x", "limit": 0}),
            ("/api/commands", {"text": 5}),
            ("/api/commands", {"text": "/unknown"}),
        ]
        for path, body in cases:
            res = client.post(path, json=body)
            assert res.status_code == 400, (path, body, res.text)
            assert res.json()["error"]
        assert client.get("/api/candidates?limit=abc").status_code == 400


def test_get_with_foreign_host_or_origin_is_refused(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        assert client.get("/api/status", headers={"Host": "attacker.example"}).status_code == 403
        assert client.get("/", headers={"Origin": "http://attacker.example"}).status_code == 403
        assert client.get("/api/status", headers={"Host": "localhost"}).status_code == 403  # port


def test_page_token_only_for_own_top_level_loads(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        own = client.get("/")
        framed = client.get("/", headers={"Sec-Fetch-Site": "cross-site"})
        js = client.get("/static/dreams.js")
    assert own.status_code == 200 and f'content="{TOKEN}"' in own.text
    assert "frame-ancestors 'none'" in own.headers["content-security-policy"]
    assert own.headers["x-frame-options"] == "DENY"
    assert TOKEN not in framed.text
    assert js.status_code == 200 and "Dream now" not in js.text and "fetch(" in js.text


def test_page_without_embedding(ws: Workspace) -> None:
    with gateway([ws], scheduler=False, embed_token=False) as (_, client, _served):
        assert TOKEN not in client.get("/").text


def test_several_workspaces_by_name_and_index(tmp_path: Path) -> None:
    a, b = make_ws(tmp_path / "alpha"), make_ws(tmp_path / "beta")
    seed_candidate(b)
    with gateway([a, b], scheduler=False) as (_, client, _served):
        assert client.get("/api/status?workspace=alpha").json()["shortTermCount"] == 0
        assert client.get("/api/status?workspace=beta").json()["shortTermCount"] == 1
        assert client.get("/api/status?workspace=1").json()["workspaceName"] == "beta"
        res = client.get("/api/status?workspace=gamma")
        assert res.status_code == 404 and "alpha" in res.json()["error"]
        assert (
            client.post("/api/memories/dream", json={"workspace": "beta"}).json()["promoted"] == 1
        )
        names = [w["name"] for w in client.get("/api/workspaces").json()["workspaces"]]
    assert names == ["alpha", "beta"]


def test_vanished_workspace_does_not_stop_others(tmp_path: Path) -> None:
    import shutil

    a, b = make_ws(tmp_path / "alpha"), make_ws(tmp_path / "beta")
    with gateway([a, b], scheduler=False) as (_, client, _served):
        shutil.rmtree(b.root)
        res = client.get("/api/status?workspace=beta")
        assert res.status_code == 422 and "does not exist" in res.json()["error"]
        assert client.get("/api/status?workspace=alpha").status_code == 200
        res = client.post("/api/memories/dream", json={"workspace": "beta"})
        assert res.status_code in (409, 422) and res.json()["error"]


def test_user_file_workspaces(tmp_path: Path) -> None:
    make_ws(tmp_path / "one")
    make_ws(tmp_path / "two")
    f = tmp_path / "gateway.toml"
    f.write_text('[[workspaces]]\npath = "one"\n[[workspaces]]\npath = "two"\nname = "main"\n')
    served = build_served(workspaces_from_user_file(tomllib.loads(f.read_text()), f))
    assert [s.name for s in served] == ["one", "main"]
    assert pick(served, "1").name == "main" and pick(served, None).name == "one"


def test_same_folder_names_get_unique_names(tmp_path: Path) -> None:
    a, b = make_ws(tmp_path / "x" / "agent"), make_ws(tmp_path / "y" / "agent")
    assert [s.name for s in build_served([(None, a.root), (None, b.root)])] == ["agent", "agent-2"]


def test_port_in_use_is_a_clear_error(ws: Workspace) -> None:
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(PortInUse, match="--port"):
            bind_socket("127.0.0.1", port)

        res = invoke(None, "gateway", "-w", str(ws.root), "--port", str(port))
        assert res.exit_code == 1
        assert "cannot listen on" in res.output and str(port) in res.output
    finally:
        taken.close()


def test_options_preflight_gets_no_cors(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.options(
            "/api/memories/dream",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
        )
    assert res.status_code in (403, 405)
    assert "access-control-allow-origin" not in res.headers


def test_json_errors_never_500(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        for raw in (b"\xff\xfe", b"null", b"1e999", b'{"query": null}'):
            res = client.post(
                "/api/memories/search", content=raw, headers={"Content-Type": "application/json"}
            )
            assert res.status_code == 400, (raw, res.text)
            json.loads(res.text)


def test_client_lib_reachable(ws: Workspace) -> None:
    """A client in another process reaches the gateway over 127.0.0.1: health and reads
    answer, a change without the token is refused."""
    import subprocess
    import sys

    probe = (
        "import httpx, json, sys\n"
        "url = sys.argv[1]\n"
        "h = httpx.get(url + '/healthz', timeout=10)\n"
        "status = httpx.get(url + '/api/status', timeout=10)\n"
        "anon = httpx.post(url + '/api/memories/dream', json={}, timeout=10)\n"
        "print(json.dumps([h.status_code, h.json()['ok'], status.status_code, anon.status_code]))\n"
    )
    with gateway([ws], scheduler=False) as (running, _client, _served):
        out = subprocess.run(
            [sys.executable, "-c", probe, running.url],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    assert json.loads(out) == [200, True, 200, 401]


def test_cli_gateway_starts_logs_and_stops_on_sigterm(ws: Workspace, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    taken.close()
    env = {**os.environ, "MEMCORE_TOKEN": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore", "gateway", "-w", str(ws.root), "--port", str(port)],
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=20)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert f"gateway start host=127.0.0.1 port={port}" in err
    token_file = Path(os.environ["MEMCORE_USER_DIR"]) / "gateway.token"
    token = token_file.read_text(encoding="utf-8").strip()
    assert token and token not in err  # kept in the file, never printed in the log
    assert f"token in {token_file}" in err
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert "gateway stop" in err


def test_cli_reads_workspaces_from_user_file(ws: Workspace, monkeypatch) -> None:
    import os

    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        user = Path(os.environ["MEMCORE_USER_DIR"])
        user.mkdir(parents=True, exist_ok=True)
        (user / "gateway.toml").write_text(
            f'[gateway]\nport = {port}\n\n[[workspaces]]\npath = "{ws.root}"\nname = "main"\n'
        )

        res = invoke(None, "gateway")
    finally:
        taken.close()
    assert res.exit_code == 1 and f"127.0.0.1:{port}" in res.output  # the file's port was used


def test_chunked_body_over_the_limit_is_refused(ws: Workspace) -> None:
    def chunks():
        for _ in range(10):
            yield b" " * 10_000

    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.post(
            "/api/memories/search", content=chunks(), headers={"Content-Type": "application/json"}
        )
    assert res.status_code == 413 and "too large" in res.json()["error"]
