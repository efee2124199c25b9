"""Figures for session dreaming (run: ``python bench/bench_sessions.py``).

1. Extractive model: a session dream over 20 sessions of 500 messages each (target <= 10 s).
2. A repeated run with nothing new: model calls (target 0) and time (target <= 200 ms).
3. Token accounting against a local Chat Completions server: charged == reported usage.
4. Quality on a planted set: planted decisions that reach the project memory, and chatter that
   does.
5. Leaks: every secret shape of tests/secret_corpus.py planted in transcripts, long messages,
   tool arguments and results and MEMORY.md, with a model that also echoes them back: secrets
   found in any request body or stored memory, version preview or export (target 0).
6. Input size: runs over 30 sessions with a large health block: the largest request body
   against the 16,000-token input cap (target: never above), and reservations that differ
   from the body sent (target 0).
7. Shared: 2 and 4 workspaces dreaming at once, each its own ``memcore sessions dream``
   process against one local Chat Completions server (that answers in 0.2 s): failed runs
   (target 0) and the tokens charged against the user's one daily budget, by workspace.

Run a subset by name: ``python bench/bench_sessions.py leaks input``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memcore.judge.llm import Completion, ExtractiveLLM, OpenAICompatibleLLM
from memcore.sessions import status
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.store import latest
from memcore.workspace.core import Workspace

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class CountingLLM(ExtractiveLLM):
    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion:
        self.calls += 1
        return super().complete(messages, max_tokens=max_tokens)


def new_workspace(base: Path, name: str) -> Workspace:
    root = base / name
    (root / "memory").mkdir(parents=True)
    (root / "sessions").mkdir()
    return Workspace(root)


def write_session(
    ws: Workspace, sid: str, messages: list[tuple[str, str]], start: datetime
) -> None:
    lines = []
    for i, (role, text) in enumerate(messages):
        ts = (start + timedelta(seconds=30 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines.append(json.dumps({"role": role, "content": text, "ts": ts}))
    (ws.root / "sessions" / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- 1 + 2: speed --------------------------------------------------------------------------

FILLER = [
    "Let me look at the failing test first.",
    "Running the suite again now.",
    "Thanks, that helps a lot!",
    "Can you check the logs from last night?",
    "I updated the handler and the tests pass locally.",
    "Here is the diff for the retry logic.",
    "Note that the sandbox API times out when the payload is larger than 1 MB.",
    "We decided to keep the exporter synchronous until volume grows.",
    "Looks good to me, ship it to staging.",
    "The root cause was a missing index on payouts(merchant_id, created_at).",
]


def big_session(rng: random.Random, n: int) -> list[tuple[str, str]]:
    msgs: list[tuple[str, str]] = []
    while len(msgs) < n:
        msgs.append(("user", rng.choice(FILLER) + f" (step {len(msgs)})"))
        if rng.random() < 0.5:
            body = " ".join(
                f"line {j}: ok {rng.randint(0, 10**6)}" for j in range(rng.randint(3, 30))
            )
            msgs.append(("tool", body))
        msgs.append(("assistant", " ".join(rng.choice(FILLER) for _ in range(rng.randint(1, 4)))))
    return msgs[:n]


def bench_speed(base: Path) -> dict[str, float | int]:
    ws = new_workspace(base, "speed")
    rng = random.Random(7)
    total_bytes = 0
    for i in range(20):
        write_session(
            ws, f"s{i:02d}", big_session(rng, 500), NOW - timedelta(days=2, minutes=10 * i)
        )
        total_bytes += (ws.root / "sessions" / f"s{i:02d}.jsonl").stat().st_size
    llm = CountingLLM()
    t0 = time.perf_counter()
    report = execute(ws, now=NOW, llm=llm)
    first = time.perf_counter() - t0
    assert report["status"] == "ok", report
    again = CountingLLM()
    t0 = time.perf_counter()
    report2 = execute(ws, now=NOW + timedelta(minutes=1), llm=again)
    second = time.perf_counter() - t0
    assert report2["status"] == "ok"
    return {
        "sessions": 20,
        "messages_per_session": 500,
        "transcript_mb": round(total_bytes / 1e6, 2),
        "first_run_s": round(first, 2),
        "first_run_calls": llm.calls,
        "repeat_run_ms": round(second * 1000, 1),
        "repeat_run_calls": again.calls,
    }


# -- 3: token accounting -----------------------------------------------------------------


def bench_tokens(base: Path) -> dict[str, int | bool]:
    from tests.chat_server import chat_server

    ws = new_workspace(base, "tokens")
    rng = random.Random(11)
    for i in range(6):
        write_session(ws, f"t{i}", big_session(rng, 60), NOW - timedelta(days=1, minutes=i))
    with chat_server() as srv:
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "bench-model", timeout=10))
        usages = list(srv.usages)
    reported = sum(u["total_tokens"] for u in usages)
    budget = status(ws, NOW)["budget"]
    return {
        "calls": report["tokens"]["calls"],
        "server_reported_total": reported,
        "charged_by_memcore": report["tokens"]["charged"],
        "budget_used_today": budget["used"],
        "reserved_before_calls": report["tokens"]["reserved"],
        "exact": reported == report["tokens"]["charged"] == budget["used"],
    }


# -- 4: quality on a planted set ------------------------------------------------------------

PLANTED = [
    ("user", "We decided to use Postgres 16 for the ledger database. [D01]"),
    ("user", "Let's switch the task queue from RQ to Celery with Redis as broker. [D02]"),
    ("assistant", "Note that the Adyen sandbox times out when the payload exceeds 1 MB. [D03]"),
    ("user", "From now on every migration ships one release before the code that needs it. [D04]"),
    ("user", "We always store money as integer cents with an ISO currency code. [D05]"),
    ("assistant", "The root cause was a missing index on payouts by merchant and date. [D06]"),
    ("user", "I prefer small pull requests that touch one module at a time. [D07]"),
    ("user", "Never log IBANs or card numbers, not even in debug mode. [D08]"),
    (
        "assistant",
        "Turns out the FX provider caches rates for 60 seconds, so retries get stale rates. [D09]",
    ),
    ("user", "We agreed to deploy production only before 16:00 Berlin time. [D10]"),
    ("user", "Going forward, feature flags are named payrail.area.flag in Unleash. [D11]"),
    (
        "assistant",
        "Lesson: run uv lock after bumping any dependency or CI fails on the lockfile. [D12]",
    ),
    ("user", "We settled on structlog for logging with payout_id bound on every line. [D13]"),
    (
        "assistant",
        "The pg fixture hangs when Docker is not running; start Docker before the tests. [D14]",
    ),
    ("user", "Let's keep the SEPA exporter as a fallback only, Adyen is the primary rail. [D15]"),
    ("user", "We use squash merges for every pull request into main. [D16]"),
    ("assistant", "Remember to rotate the webhook HMAC keys in Vault every 90 days. [D17]"),
    ("user", "Decision: reversal entries must carry a reason code from the fixed list. [D18]"),
    ("user", "We'll use timestamptz in UTC everywhere and convert only at the edges. [D19]"),
    (
        "assistant",
        "Beware: Postgres now() is fixed within a transaction, order by created_at and id. [D20]",
    ),
]
PLAIN_CHATTER = [
    ("user", "Good morning! How are you today? [C01]"),
    ("assistant", "Sounds good, I'll get started on that right away. [C02]"),
    ("user", "Thanks a lot, that was quick! [C03]"),
    ("assistant", "Let me open the file and take a look. [C04]"),
    ("user", "Is the build green yet? [C05]"),
    ("assistant", "Running the full test suite now, this takes a minute. [C06]"),
    ("user", "Ok cool, ping me when it's done. [C07]"),
    ("assistant", "Done! All 611 tests passed in 48 seconds. [C08]"),
    ("user", "Great, see you tomorrow. [C09]"),
    ("assistant", "Here is the updated diff for your review. [C10]"),
]
TRICKY_CHATTER = [  # chatter that contains cue words
    ("user", "I always forget where the config lives, haha. [T01]"),
    ("assistant", "I'll make sure to double-check the output this time. [T02]"),
    ("user", "Never mind, the question is answered already. [T03]"),
    ("user", "Let's grab lunch first and continue after. [T04]"),
    ("assistant", "The fix is in progress, almost done with the tests. [T05]"),
    ("user", "I want to finish this before the standup at ten. [T06]"),
]


def bench_quality(base: Path) -> dict[str, object]:
    ws = new_workspace(base, "quality")
    rng = random.Random(3)
    chatter = PLAIN_CHATTER + TRICKY_CHATTER
    per = len(PLANTED) // 10
    for s in range(10):
        msgs: list[tuple[str, str]] = []
        planted = PLANTED[s * per : (s + 1) * per]
        if s in (4, 7):  # a recurring decision, said again in later sessions
            planted = [
                *planted,
                ("user", "Reminder: we decided to use Postgres 16 for the ledger database. [D01]"),
            ]
        items = planted + rng.sample(chatter, 8)
        rng.shuffle(items)
        for role, text in items:
            if role == "assistant":
                msgs.append(("user", "Go on."))
            msgs.append((role, text))
            if role == "user":
                msgs.append(("assistant", "Understood."))
        if msgs[-1][0] == "user":
            msgs.append(("assistant", "Okay."))
        write_session(ws, f"q{s}", msgs, NOW - timedelta(days=1, hours=10 - s))
    execute(ws, now=NOW, llm=CountingLLM())
    from memcore.workspace.db import connect

    conn = connect(ws.db_path)
    project = latest(conn, "project", project_id(ws))
    text = project.text if project else ""
    session_text = "\n".join(
        r[0] for r in conn.execute("SELECT text FROM sess_memories WHERE level='session'")
    )
    conn.close()
    tags = {t for t in (x[1][-4:-1] for x in PLANTED)}
    reached = sorted(t for t in tags if f"[{t}]" in text)
    plain_leak = sorted(t for _, t in PLAIN_CHATTER if t[-5:] in text)
    tricky_leak = sorted(t[-4:-1] for _, t in TRICKY_CHATTER if t[-5:] in text)
    return {
        "planted_decisions": len(tags),
        "reached_project_memory": len(reached),
        "missed": sorted(tags - set(reached)),
        "in_some_session_memory": sum(1 for t in tags if f"[{t}]" in session_text),
        "plain_chatter_lines": len(PLAIN_CHATTER),
        "plain_chatter_in_project_memory": len(plain_leak),
        "tricky_chatter_lines": len(TRICKY_CHATTER),
        "tricky_chatter_in_project_memory": tricky_leak,
        "project_memory_chars": len(text),
        "d01_bullets": text.count("[D01]"),
    }


# -- 5: leaks ---------------------------------------------------------------------------------


def bench_leaks(base: Path) -> dict[str, object]:
    from memcore.sessions import dream
    from tests import test_sessions_leaks as leak
    from tests.chat_server import chat_server
    from tests.secret_corpus import SECRETS

    ws = new_workspace(base, "leaks")
    lines = leak.LINES
    third = len(lines) // 3
    leak.plain_session(ws, "plain", lines[:third])
    leak.plain_session(ws, "plain2", lines[third:])
    leak.long_session(ws, "long", lines[third : 2 * third])
    leak.tool_session(ws, "tools", lines)
    leak.memory_md(ws)
    with chat_server() as srv:
        gen = leak.echoing(srv)
        next(gen)
        report = dream(ws, now=leak.NOW, llm=OpenAICompatibleLLM(srv.url, "bench", timeout=10))
        next(gen, None)
        sent = leak.haystacks(srv)
        calls = len(srv.bodies)
    memory = leak.stored(ws)
    shapes = {(secret, kind) for _line, secret, kind in SECRETS}
    return {
        "status": report["status"],
        "secret_lines": len(SECRETS),
        "distinct_secrets": len(shapes),
        "kinds": len({k for _s, k in shapes}),
        "calls": calls,
        "leaked_to_model": sum(1 for s, _k in shapes if leak.leaks(s, sent)),
        "leaked_to_memory": sum(1 for s, _k in shapes if leak.leaks(s, memory)),
    }


# -- 6: input size ----------------------------------------------------------------------------


def bench_input(base: Path) -> dict[str, object]:
    from memcore.sessions import health_report
    from memcore.sessions.budget import MAX_INPUT_TOKENS
    from memcore.sessions.userdb import open_user_db
    from tests.chat_server import chat_server
    from tests.test_sessions_cap import busy_sessions, large_health

    ws = new_workspace(base, "input")
    busy_sessions(ws, 30)
    large_health(ws)
    health = health_report(ws, compact=True)
    runs = 0
    with chat_server() as srv:
        llm = OpenAICompatibleLLM(srv.url, "bench", timeout=10)
        while runs < 5:
            report = execute(ws, now=NOW + timedelta(minutes=runs), llm=llm, health=health)
            runs += 1
            if not report["queued"]:
                break
        bodies = [len(b) for b in srv.bodies]
        tasks = [json.loads(r["messages"][-1]["content"])["task"] for r in srv.requests]
    conn = open_user_db()  # the user's one ledger (this bench's user dir is its own)
    reserved = [
        int(r[0])
        for r in conn.execute(
            "SELECT reserved FROM sess_budget_calls WHERE workspace=?", (str(ws.root),)
        )
    ]
    conn.close()
    from memcore.sessions.prompts import max_output_tokens
    from memcore.sessions.settings import sessions_settings
    from memcore.workspace.config import load_config

    st = sessions_settings(load_config(ws))
    limits = {"session": st.session_limit, "project": st.project_limit}
    expected = [
        b + max_output_tokens(limits.get(t, st.global_limit))
        for b, t in zip(bodies, tasks, strict=True)
    ]
    project = [b for b, t in zip(bodies, tasks, strict=True) if t == "project"]
    return {
        "sessions": 30,
        "runs": runs,
        "health_block_bytes": len(json.dumps(health, ensure_ascii=False).encode()),
        "calls": len(bodies),
        "project_calls": len(project),
        "largest_request_bytes": max(bodies),
        "largest_project_request_bytes": max(project) if project else 0,
        "cap": MAX_INPUT_TOKENS,
        "over_cap": sum(1 for b in bodies if b > MAX_INPUT_TOKENS),
        "reservation_mismatches": sum(
            1 for r, e in zip(sorted(reserved), sorted(expected), strict=False) if r != e
        )
        + abs(len(reserved) - len(expected)),
    }


# -- 7: workspaces at once ----------------------------------------------------------------


def bench_shared(base: Path) -> dict[str, object]:
    import subprocess

    from memcore.sessions.userdb import open_user_db
    from tests.chat_server import Reply, chat_server

    out: dict[str, object] = {}
    for n in (2, 4):
        user = base / f"user-shared-{n}"
        env = {**os.environ, "MEMCORE_USER_DIR": str(user), "MEMCORE_NOW": NOW.isoformat()}
        with chat_server() as srv:
            srv.default = lambda _request: Reply(delay=0.2)
            wss = []
            for k in range(n):
                ws = new_workspace(base, f"shared{n}-{k}")
                ws.config_path.write_text(
                    f'[llm]\nbase_url = "{srv.url}"\nmodel = "bench"\n'
                    "[sessions]\nenabled = true\nmin_sessions = 1\n",
                    encoding="utf-8",
                )
                for i in range(3):
                    msgs = [
                        ("user", FILLER[(k + i + j) % len(FILLER)] + f" (ws {k}, session {i})")
                        if j % 2 == 0
                        else ("assistant", "Noted; done.")
                        for j in range(8)
                    ]
                    write_session(ws, f"s{i}", msgs, NOW - timedelta(days=1, hours=i))
                wss.append(ws)
            t0 = time.perf_counter()
            cmd = [sys.executable, "-m", "memcore", "-w"]
            procs = [
                subprocess.Popen(
                    [*cmd, str(ws.root), "sessions", "dream", "--json"],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for ws in wss
            ]
            results = [p.communicate(timeout=300) for p in procs]
            wall = time.perf_counter() - t0
        reports = []
        for p, (stdout, _err) in zip(procs, results, strict=True):
            try:
                reports.append({**json.loads(stdout), "exit": p.returncode})
            except ValueError:
                reports.append({"status": "crashed", "exit": p.returncode, "error": _err[-300:]})
        os.environ["MEMCORE_USER_DIR"] = str(user)
        conn = open_user_db()
        try:
            rows = conn.execute(
                "SELECT workspace, sum(charged) c, count(*) k FROM sess_budget_calls"
                " GROUP BY workspace"
            ).fetchall()
            gv = conn.execute(
                "SELECT max(version) FROM sess_memories WHERE level='global'"
            ).fetchone()[0]
        finally:
            conn.close()
        ledger = {Path(r["workspace"]).name: int(r["c"] or 0) for r in rows}
        out[f"{n}_workspaces"] = {
            "failed_runs": sum(1 for r in reports if r.get("status") != "ok" or r["exit"] != 0),
            "statuses": [r.get("status") for r in reports],
            "errors": [r.get("error") for r in reports if r.get("error")],
            "calls": sum(int(r["k"]) for r in rows),
            "charged_by_reports": sum(r.get("tokens", {}).get("charged", 0) for r in reports),
            "charged_in_user_ledger": sum(ledger.values()),
            "ledger_by_workspace": ledger,
            "global_versions": gv,
            "wall_s": round(wall, 2),
        }
    return out


BENCHES = {
    "speed": bench_speed,
    "tokens": bench_tokens,
    "quality": bench_quality,
    "leaks": bench_leaks,
    "input": bench_input,
    "shared": bench_shared,
}


def main() -> None:
    names = sys.argv[1:] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        sys.exit(f"unknown bench {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["MEMCORE_USER_DIR"] = str(base / "user")
        results = {name: BENCHES[name](base) for name in names}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
