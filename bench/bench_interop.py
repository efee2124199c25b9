"""Other agents' layouts at scale: a generated 1,000-session Claude Code projects folder and a
1,000-daily-note OpenClaw workspace.

For each: workspace-kind detection (in process, ``memcore.workspace.kinds.kind_of``), then as a
user runs them (``python -m memcore`` subprocesses, start-up included): ``memcore status``,
``memcore memory search`` once (the first run builds the index; its stderr is a
pseudo-terminal, and ``first_search_progress`` says whether the progress bar was drawn there;
the timed run is the next one, ``--no-record``), ``memcore memory promote`` (the preview); for
the Claude Code folder also ``memcore sessions status`` over the whole projects folder (every
transcript's ``cwd`` bound to its project). Wall time of each, median of ``--runs``, and the
CPU seconds of that run (``*_cpu_s``: user + system of the child, which load does not
inflate), with the load average and the start-up alone (``memcore --help``) to set the
commands' own work apart.

Usage: ``python bench/bench_interop.py [--sessions 1000] [--notes 1000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memcore.recall.entries import query_hash  # noqa: E402
from memcore.workspace.kinds import kind_of  # noqa: E402

WORDS = [
    "deploy",
    "billing",
    "postgres",
    "vpn",
    "backup",
    "invoice",
    "renderer",
    "timezone",
    "pipeline",
    "staging",
    "release",
    "router",
    "vlan",
    "cache",
    "queue",
    "worker",
    "api",
    "token",
    "rotation",
    "schema",
    "migration",
    "nightly",
    "alert",
]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."


def claude_projects(home: Path, n: int, rng: random.Random) -> Path:
    """``n`` sessions over 50 projects under home/.claude/projects, each with its cwd."""
    projects = home / ".claude" / "projects"
    start = datetime(2026, 11, 1, tzinfo=UTC)
    for i in range(n):
        cwd = home / "code" / f"proj{i % 50}"
        folder = projects / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        t = start + timedelta(hours=i)
        for k in range(6):
            role = "user" if k % 2 == 0 else "assistant"
            lines.append(
                {
                    "type": role,
                    "uuid": f"{i}-{k}",
                    "cwd": str(cwd),
                    "timestamp": (t + timedelta(minutes=k)).isoformat().replace("+00:00", "Z"),
                    "message": {"role": role, "content": sentence(rng)},
                }
            )
        (folder / f"s{i:04d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    memory = projects / re.sub(r"[^A-Za-z0-9]", "-", str(home / "code" / "proj0")) / "memory"
    memory.mkdir()
    index = []
    for k in range(40):
        name = f"topic{k}.md"
        (memory / name).write_text(
            f"---\nname: Topic {k}\ndescription: {sentence(rng)}\ntype: project\n---\n"
            f"{sentence(rng)}\n\n**Why:** {sentence(rng)}\n"
        )
        index.append(f"- [Topic {k}]({name}) — {sentence(rng)}")
    (memory / "MEMORY.md").write_text("\n".join(index) + "\n")
    return memory


def openclaw_workspace(home: Path, n: int, rng: random.Random) -> Path:
    """``n`` daily notes (split days and a sub-folder among them) and a recall store."""
    ws = home / ".openclaw" / "workspace"
    (ws / "memory" / "work-log").mkdir(parents=True)
    (home / ".openclaw" / "openclaw.json").write_text(
        '{"plugins": {"entries": {"memory-core": {"config": {"dreaming": {"mode": "off"}}}}}}\n'
    )
    day0 = datetime(2024, 3, 1, tzinfo=UTC)
    entries = {}
    for i in range(n):
        day = (day0 + timedelta(days=i)).date().isoformat()
        if i % 10 == 0:
            rel = f"memory/{day}-0755.md"
        elif i % 10 == 1:
            rel = f"memory/work-log/{day}.md"
        else:
            rel = f"memory/{day}.md"
        lines = [f"# {day}", ""] + [f"- {sentence(rng)}" for _ in range(8)]
        (ws / rel).write_text("\n".join(lines) + "\n")
        for line_no in (3, 5, 7):
            key = f"memory:{rel}:{line_no}:{line_no}"
            recalls = rng.randint(1, 6)
            entries[key] = {
                "key": key,
                "path": rel,
                "startLine": line_no,
                "endLine": line_no,
                "source": "memory",
                "snippet": lines[line_no - 1],
                "recallCount": recalls,
                "totalScore": round(recalls * rng.uniform(0.6, 1.0), 3),
                "maxScore": 1,
                "firstRecalledAt": "2026-11-20T10:00:00.000Z",
                "lastRecalledAt": "2026-11-28T10:00:00.000Z",
                "queryHashes": [query_hash(f"q{j}") for j in range(rng.randint(1, 4))],
            }
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n\n" + "".join(
        f"- {sentence(rng)}\n" for _ in range(60)))  # fmt: skip
    dreams = ws / "memory" / ".dreams"
    dreams.mkdir()
    doc = {"version": 1, "updatedAt": "2026-11-28T10:00:00.000Z", "entries": entries}
    (dreams / "short-term-recall.json").write_text(json.dumps(doc, indent=2) + "\n")
    return ws


def timed(env: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "memcore", *args], env=env, capture_output=True, text=True
    )
    return time.perf_counter() - t, r


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed_tty(env: dict[str, str], *args: str) -> tuple[float, str]:
    """``timed`` with stderr on a pseudo-terminal (as a user sees it): the wall time and what
    was drawn there (the index build's progress bar)."""
    import pty
    import threading

    master, slave = pty.openpty()
    drawn: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            drawn.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    t = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "memcore", *args], env=env, stdout=subprocess.PIPE, stderr=slave
    )
    dt = time.perf_counter() - t
    os.close(slave)
    reader.join(timeout=5)
    os.close(master)
    if r.returncode != 0:
        raise SystemExit(f"memcore {' '.join(args)} failed")
    return dt, b"".join(drawn).decode("utf-8", "replace")


def median_of(runs: int, env: dict[str, str], *args: str) -> tuple[float, float]:
    """(median wall seconds, CPU seconds of the median run) of ``runs`` runs."""
    times = []
    for _ in range(runs):
        cpu = _child_cpu()
        dt, r = timed(env, *args)
        if r.returncode != 0:
            raise SystemExit(f"memcore {' '.join(args)} failed: {r.stderr.strip()}")
        times.append((dt, _child_cpu() - cpu))
    wall, cpu_s = sorted(times)[len(times) // 2]
    return round(wall, 3), round(cpu_s, 3)


def put(row: dict[str, object], name: str, got: tuple[float, float]) -> None:
    row[f"{name}_s"], row[f"{name}_cpu_s"] = got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {
            **os.environ,
            "HOME": str(home),
            "PYTHONPATH": str(ROOT),
            "MEMCORE_USER_DIR": str(Path(tmp) / "user"),
            "MEMCORE_EMBEDDER": os.environ.get("MEMCORE_EMBEDDER", "hashing"),
        }
        os.environ.update({"HOME": env["HOME"], "MEMCORE_USER_DIR": env["MEMCORE_USER_DIR"]})
        memory = claude_projects(home, a.sessions, rng)
        projects = memory.parent.parent
        (Path(tmp) / "user").mkdir()
        oc = openclaw_workspace(home, a.notes, rng)
        rows = []
        for label, ws in (("Claude Code", memory), ("OpenClaw", oc)):
            t = time.perf_counter()
            for _ in range(100):
                kind = kind_of(ws).name
            detect = (time.perf_counter() - t) / 100
            if label == "Claude Code":
                state = Path(json.loads(timed(env, "-w", str(ws), "status", "--json")[1].stdout)[
                    "stateDir"])  # fmt: skip
                state.mkdir(parents=True, exist_ok=True)
                (state / "memcore.toml").write_text(f'[sessions]\npath = "{projects}"\n')
            first, drawn = timed_tty(env, "-w", str(ws), "memory", "search", "billing postgres")
            search = ("-w", str(ws), "memory", "search", "billing postgres", "--no-record")
            row: dict[str, object] = {
                "layout": label,
                "kind": kind,
                "detect_ms": round(detect * 1000, 2),
                "first_search_s": round(first, 3),
                "first_search_progress": "Indexing memory" in drawn,
            }
            put(row, "status", median_of(a.runs, env, "-w", str(ws), "status"))
            put(row, "search", median_of(a.runs, env, *search))
            put(row, "preview", median_of(a.runs, env, "-w", str(ws), "memory", "promote"))
            if label == "Claude Code":
                first_scan, _ = timed(env, "-w", str(ws), "sessions", "status")
                row["sessions_first_s"] = round(first_scan, 3)
                put(
                    row,
                    "sessions_status",
                    median_of(a.runs, env, "-w", str(ws), "sessions", "status"),
                )
            rows.append(row)
        startup = median_of(a.runs, env, "--help")[0]  # python + click, no work
        load = os.getloadavg()
        out = {"load": [round(x, 2) for x in load], "startup_s": startup, "rows": rows}
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
