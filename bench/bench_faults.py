"""Crash safety of write-ahead runs, undo fidelity, and the cost of the journal.

    python bench/bench_faults.py [--scenarios promote,dream-apply,dream-auto,undo,import,
                                              restore,memory-set]
                                 [--random 20] [--stride 1] [--entries 20000] [--skip-cost]

Crash safety. On a copy of a prepared workspace (MEMORY.md with a near-duplicate pair and a
stale session note, a recall store with three promotable recalls), each scenario's command
(``memory promote --apply``, ``dream --apply --yes``, ``dream --auto``, ``undo`` of a
``dream --auto`` run, ``import FILE --apply`` of a five-row JSONL file, ``restore VERSION``
back to the version before a ``dream --auto`` merge, and ``memory set ID --pin``) is first
traced once with strace to list its mutating system calls
(write/pwrite64 to a file, rename, unlink, link, fsync, fdatasync, ftruncate, mkdir, and openat
with a write or create flag). Then, for each of them in turn, a fresh copy is run with strace
injecting SIGKILL just before that call (``-e inject=SYSCALL:signal=KILL:when=N``), plus
``--random`` kills at random times. After each kill:

- MEMORY.md is one of the states an uninterrupted run passes through (before or after);
- the recall store parses; a lock file left behind names its (dead) owner;
- the next run (the same command again) converges to the uninterrupted run's MEMORY.md, with no
  duplicate bullet or section, and the journal has no run left pending;
- undoing every run gives back the original MEMORY.md and recall store, byte for byte;
- no recall is marked promoted without its entry in MEMORY.md (or the archive);
- no lock, no pending-run marker and no temp file is left.

Undo fidelity: every kind of run (promote, dream --apply, dream --auto, a merge, a
supersession, a forget, review decision, import, memory set, restore) undone: MEMORY.md, the
daily note, the archive and the store byte-identical.

Cost: on a --entries MEMORY.md, the apply time of a journaled run against a bare atomic write
of the same bytes, and the database growth per run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from memcore.cli import cli  # noqa: E402
from memcore.workspace.core import Workspace  # noqa: E402

PY = os.path.realpath(sys.executable)
MEMCORE = [PY, "-c", "import sys; sys.path.insert(0, %r); from memcore.cli import main; main()"]
MEMCORE[2] = MEMCORE[2] % str(ROOT)
TRACED = (
    "write,pwrite64,rename,renameat,renameat2,unlink,unlinkat,link,linkat,fsync,fdatasync,"
    "ftruncate,mkdir,mkdirat,openat"
)
_LINE = re.compile(r"^\d+\s+(\w+)\((.*)$")

NOTE = (
    "# 2026-11-28\n\n"
    "- The staging database is db-stg-02 in eu-west-1.\n"
    "- Ana owns the billing service and its on-call rota.\n"
    "- Deploys go through the blue/green pipeline on Fridays.\n"
)
BASE = (
    "# Long-Term Memory\n\n"
    "## Conventions\n\n"
    "- Keep pull requests under 400 lines.\n"
    "- The cache TTL is 300 seconds.\n"
    "- The cache TTL is 300 seconds!\n"
    "- Logs are JSON lines with a trace id.\n"
    "- Use pnpm, never npm, in this repository.\n"
    "- Feature flags live in config/flags.yaml.\n\n"
    "## Sessions\n\n"
    '<!-- memcore:entry id="old-session" type="session_state" created="2025-01-01" -->\n'
    "- Debugging the flaky login test.\n"
    "- The wiki lives at wiki.example.org.\n"
    "- Releases are tagged vYYYY.MM.DD.\n"
    "- Ops pages go to #ops-alerts.\n"
)


def prepare(dest: Path) -> Workspace:
    """The base workspace: MEMORY.md, one daily note and three promotable recalls."""
    from memcore.recall.store import record_recalls
    from memcore.workspace.clock import utcnow

    (dest / "memory").mkdir(parents=True)
    ws = Workspace(dest)
    ws.memory_md.write_text(BASE, encoding="utf-8")
    (ws.memory_dir / "2026-11-28.md").write_text(NOTE, encoding="utf-8")
    base = utcnow().replace(microsecond=0)
    for line in (3, 4, 5):
        hit = {
            "path": "memory/2026-11-28.md",
            "startLine": line,
            "endLine": line,
            "score": 0.95,
            "snippet": NOTE.split("\n")[line - 1],
        }
        for i in range(4):
            record_recalls(ws, f"q{line}-{i}", [hit], now=base - timedelta(hours=i + 1))
    return ws


def run_cli(ws: Workspace, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["-w", str(ws.root), *args])
    return res.exit_code, res.output


def read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


@dataclass
class Scenario:
    name: str
    args: list[str]
    # prepares the template workspace; returns the command's arguments when they depend on it
    setup: Callable[[Workspace], list[str] | None] = lambda ws: None
    template: Path = Path()
    before: bytes = b""
    after: bytes = b""
    seconds: float = 0.0
    points: list[tuple[str, int]] = field(default_factory=list)


def _setup_undo(ws: Workspace) -> None:
    code, out = run_cli(ws, "dream", "--auto")
    assert code == 0, out


# Every row has its created_at (as a mem0 export does): a row without one is dated at the
# moment of the import, so a rerun after a kill would rightly write a different marker.
IMPORT_ROWS = (
    {"text": "The payments API rate limit is 100 requests per second.", "type": "fact"},
    {"memory": "Prefer squash merges on the main repository.", "type": "convention"},
    {"text": "The on-call handover is on Mondays at 10:00.", "importance": 0.8},
    {"text": "Staging certificates renew on the first of the month.", "pinned": True},
    {"content": "The data team reviews schema changes.", "scope": "project"},
)
IMPORT_ROWS = tuple(
    {**r, "created_at": f"2026-10-0{i + 1}T09:00:00Z"} for i, r in enumerate(IMPORT_ROWS)
)


def _setup_import(ws: Workspace) -> list[str]:
    """A JSONL export beside (not inside) the workspace; the command imports it."""
    path = ws.root.parent / "import.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in IMPORT_ROWS), encoding="utf-8")
    return ["import", str(path), "--apply"]


def _setup_restore(ws: Workspace) -> list[str]:
    """A merge run, so there is an older MEMORY.md version to restore."""
    code, out = run_cli(ws, "dream", "--auto", "--only", "merge")
    assert code == 0, out
    return ["restore", str(_oldest_version(ws))]


def _setup_set(ws: Workspace) -> list[str]:
    return ["memory", "set", _first_id(ws), "--pin"]


SCENARIOS = {
    "promote": Scenario("promote", ["memory", "promote", "--apply"]),
    "dream-apply": Scenario("dream-apply", ["dream", "--apply", "--yes"]),
    "dream-auto": Scenario("dream-auto", ["dream", "--auto"]),
    "undo": Scenario("undo", ["undo"], _setup_undo),
    "import": Scenario("import", [], _setup_import),
    "restore": Scenario("restore", [], _setup_restore),
    "memory-set": Scenario("memory-set", [], _setup_set),
}


def mutating_points(trace: Path) -> list[tuple[str, int]]:
    """(syscall, N): the N-th call of that syscall is mutating (strace's when=N)."""
    counts: dict[str, int] = {}
    out: list[tuple[str, int]] = []
    for line in trace.read_text(errors="replace").splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        name, rest = m.group(1), m.group(2)
        counts[name] = counts.get(name, 0) + 1
        if name in ("write",) and re.match(r"[12],", rest):
            continue  # stdout and stderr are not the workspace
        if name == "openat" and not re.search(r"O_WRONLY|O_RDWR|O_CREAT", rest):
            continue
        out.append((name, counts[name]))
    return out


def fresh(sc: Scenario, tmp: Path, tag: str) -> Workspace:
    dest = tmp / tag
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(sc.template, dest)
    return Workspace(dest)


def build(sc: Scenario, tmp: Path, base: Path) -> None:
    sc.template = tmp / f"template-{sc.name}"
    shutil.copytree(base, sc.template)
    ws = Workspace(sc.template)
    args = sc.setup(ws)
    if args is not None:
        sc.args = args
    sc.before = ws.memory_md.read_bytes()
    clean = fresh(sc, tmp, "clean")
    trace = tmp / "trace.txt"
    t0 = time.perf_counter()
    subprocess.run(
        [
            "strace",
            "-f",
            "-qq",
            "-o",
            str(trace),
            "-e",
            f"trace={TRACED}",
            *MEMCORE,
            "-w",
            str(clean.root),
            *sc.args,
        ],
        check=True,
        capture_output=True,
    )
    sc.seconds = time.perf_counter() - t0
    sc.after = clean.memory_md.read_bytes()
    if sc.after == sc.before:
        raise SystemExit(f"{sc.name}: {' '.join(sc.args)} changed nothing to crash")
    sc.points = mutating_points(trace)


def check(sc: Scenario, ws: Workspace, base: Path, origin: dict[str, bytes | None]) -> list[str]:
    """The checks after a kill (see the module docstring); returns the violations."""
    bad: list[str] = []
    now = read(ws.memory_md)
    if now not in (sc.before, sc.after):
        bad.append("MEMORY.md is neither the state before nor after the run")
    try:
        json.loads(read(ws.store_path) or b"{}")
    except ValueError:
        bad.append("the recall store does not parse")
    lock = read(ws.lock_path)
    if lock is not None and not re.fullmatch(rb"\d+:\d+\n", lock):
        bad.append(f"ownerless lock file {lock!r}")
    # the next run converges
    if sc.name == "undo":
        code, out = run_cli(ws, "undo", "--json")
        if code != 0 and "no run to undo" not in out:
            bad.append(f"rerun of undo failed: {tail(out)}")
    else:
        code, out = run_cli(ws, *sc.args)
        if code != 0:
            bad.append(f"the next run failed: {tail(out)}")
    text = (read(ws.memory_md) or b"").decode()
    if text.encode() != sc.after:
        bad.append("the next run did not converge to the uninterrupted run's MEMORY.md")
    lines = [ln for ln in text.splitlines() if ln.startswith("- ")]
    if len(lines) != len(set(lines)) or text.count("## Promoted From Short-Term Memory") > 1:
        bad.append("duplicate bullet or section")
    if ws.db_path.exists():
        conn = sqlite3.connect(ws.db_path)
        pending = conn.execute("SELECT count(*) FROM dream_runs WHERE status = 'pending'")
        if pending.fetchone()[0]:
            bad.append("a run is still pending in the journal")
        conn.close()
    bad += promoted_without_entry(ws)
    # undo everything: the original bytes come back
    for _ in range(10):
        code, out = run_cli(ws, "undo")
        if code != 0:
            if "no run to undo" not in out:
                bad.append(f"undo failed: {tail(out)}")
            break
    if read(ws.memory_md) != origin["memory"]:
        bad.append("undo did not give back the original MEMORY.md")
    if read(ws.store_path) != origin["store"]:
        bad.append("undo did not give back the original recall store")
    bad += promoted_without_entry(ws)
    left = [n for n in os.listdir(ws.dreams_dir) if n.endswith(".tmp")]
    if ws.lock_path.exists() or ws.pending_run_path.exists() or left:
        bad.append(f"left behind: lock={ws.lock_path.exists()} tmp={left}")
    return bad


def tail(out: str) -> str:
    """The last two lines of a command's output, on one line."""
    return " | ".join(out.strip().splitlines()[-2:])[:200]


def promoted_without_entry(ws: Workspace) -> list[str]:
    entries = json.loads(read(ws.store_path) or b'{"entries": {}}').get("entries", {})
    text = (read(ws.memory_md) or b"").decode() + (read(ws.archive_path) or b"").decode()
    lost = [k for k, e in entries.items() if e.get("promotedAt") and f'key="{k}"' not in text]
    return [f"recall {k} marked promoted without its entry" for k in lost]


def kill_at(sc: Scenario, ws: Workspace, syscall: str, n: int) -> int:
    proc = subprocess.run(
        [
            "strace",
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            f"trace={syscall}",
            "-e",
            f"inject={syscall}:signal=KILL:when={n}",
            *MEMCORE,
            "-w",
            str(ws.root),
            *sc.args,
        ],
        capture_output=True,
        timeout=120,
    )
    return proc.returncode


def kill_random(sc: Scenario, ws: Workspace, rng: random.Random) -> float:
    delay = rng.uniform(0.0, sc.seconds)
    proc = subprocess.Popen(
        [*MEMCORE, "-w", str(ws.root), *sc.args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return delay


def crash_safety(names: list[str], n_random: int, stride: int, tmp: Path) -> dict[str, Any]:
    base = tmp / "base"
    prepare(base)
    origin = {
        "memory": read(base / "MEMORY.md"),
        "store": read(base / "memory/.dreams/short-term-recall.json"),
    }
    rng = random.Random(7)
    report: dict[str, Any] = {}
    for name in names:
        sc = SCENARIOS[name]
        build(sc, tmp, base)
        points = sc.points[::stride]
        killed = violations = 0
        examples: list[str] = []
        by_call: dict[str, int] = {}
        for syscall, n in points:
            ws = fresh(sc, tmp, "run")
            rc = kill_at(sc, ws, syscall, n)
            killed += rc in (-signal.SIGKILL, 128 + signal.SIGKILL)
            by_call[syscall] = by_call.get(syscall, 0) + 1
            bad = check(sc, ws, base, origin)
            violations += bool(bad)
            examples += [f"{syscall}#{n}: {b}" for b in bad[:2]]
        for _ in range(n_random):
            ws = fresh(sc, tmp, "run")
            delay = kill_random(sc, ws, rng)
            bad = check(sc, ws, base, origin)
            violations += bool(bad)
            examples += [f"random {delay:.2f}s: {b}" for b in bad[:2]]
        report[name] = {
            "mutatingCalls": len(sc.points),
            "killPoints": len(points),
            "killedBeforeTheCall": killed,
            "byCall": by_call,
            "randomKills": n_random,
            "violations": violations,
            "examples": examples[:10],
            "cleanRunSeconds": round(sc.seconds, 2),
        }
        print(
            f"{name}: {len(points)} kill points ({killed} killed) + {n_random} random, "
            f"violations {violations}",
            flush=True,
        )
        for e in examples[:10]:
            print("   ", e, flush=True)
    return report


def undo_fidelity(tmp: Path) -> dict[str, bool]:
    """Each kind of run, undone at once: every file byte-identical."""
    out: dict[str, bool] = {}

    def files(ws: Workspace) -> dict[str, bytes | None]:
        return {
            p: read(ws.root / p)
            for p in (
                "MEMORY.md",
                "memory/2026-11-28.md",
                "memory/.dreams/archive.md",
                "memory/.dreams/short-term-recall.json",
            )
        }

    def one(kind: str, act: Callable[[Workspace], None]) -> None:
        dest = tmp / f"fid-{kind}"
        shutil.rmtree(dest, ignore_errors=True)
        ws = prepare(dest)
        if kind == "review":
            ws.memory_md.write_text(
                BASE + "- The API listens on port 8080.\n- The API listens on port 9090.\n",
                encoding="utf-8",
            )
            run_cli(ws, "dream", "--auto", "--only", "reconcile")
        if kind == "restore":
            run_cli(ws, "dream", "--auto", "--only", "merge")
        if kind == "dream supersede":
            ws.memory_md.write_text(
                BASE
                + '<!-- memcore:entry id="ci-old" created="2026-10-01" -->\n'
                + "- CI runs on Jenkins.\n"
                + '<!-- memcore:entry id="ci-new" created="2026-11-01" -->\n'
                + "- CI moved from Jenkins to Buildkite.\n",
                encoding="utf-8",
            )
        if kind == "import":
            _setup_import(ws)
        before = files(ws)
        act(ws)
        changed = files(ws) != before
        code, _ = run_cli(ws, "undo")
        out[kind] = changed and code == 0 and files(ws) == before

    one("promote", lambda ws: run_cli(ws, "memory", "promote", "--apply"))
    one("dream --apply", lambda ws: run_cli(ws, "dream", "--apply", "--yes"))
    one("dream --auto", lambda ws: run_cli(ws, "dream", "--auto"))
    one("dream merge", lambda ws: run_cli(ws, "dream", "--auto", "--only", "merge"))
    one("dream supersede", lambda ws: run_cli(ws, "dream", "--auto", "--only", "reconcile"))
    one("dream forget", lambda ws: run_cli(ws, "dream", "--auto", "--only", "decay,forget"))
    one("import", lambda ws: run_cli(ws, *_setup_import(ws)))
    one("review", lambda ws: run_cli(ws, "review", "1", "a"))
    one("memory set", lambda ws: run_cli(ws, "memory", "set", _first_id(ws), "--pin"))
    one("restore", lambda ws: run_cli(ws, "restore", str(_oldest_version(ws))))
    return out


def _first_id(ws: Workspace) -> str:
    from memcore.workspace.entries import parse

    return parse(ws.memory_md.read_text(encoding="utf-8")).entries[0].id


def _oldest_version(ws: Workspace) -> int:
    from memcore.journal import history

    return int(history.versions(ws)[-1]["version"])


def journal_cost(entries: int, runs: int, tmp: Path) -> dict[str, Any]:
    """Apply time of a journaled run on a large MEMORY.md against a bare atomic write, and
    the database growth per run."""
    from memcore.journal import history, wal
    from memcore.journal import runs as journal_runs
    from memcore.workspace.clock import utcnow
    from memcore.workspace.core import atomic_write_bytes

    dest = tmp / "cost"
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "memory").mkdir(parents=True)
    ws = Workspace(dest)
    text = "# Long-Term Memory\n\n" + "".join(
        f"- Fact {i}: service-{i % 97} uses port {1000 + i} and owner team-{i % 13}.\n"
        for i in range(entries)
    )
    ws.memory_md.write_text(text, encoding="utf-8")
    bare: list[float] = []
    journaled: list[float] = []
    sizes: list[int] = []
    with history.connect(ws):
        pass
    for i in range(runs):
        text += f"- Added fact {i}.\n"
        data = text.encode()
        t0 = time.perf_counter()
        atomic_write_bytes(dest / "bare.md", data)
        bare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with ws.lock(), history.connect(ws) as conn:
            now = utcnow()
            wal.commit_run(
                ws,
                conn,
                wal.RunSpec(journal_runs.new_run_id(now), "bench", "bench", now),
                {ws.memory_md: data},
            )
        journaled.append(time.perf_counter() - t0)
        conn2 = sqlite3.connect(ws.db_path)
        conn2.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn2.close()
        sizes.append(ws.db_path.stat().st_size)
    growth = [b - a for a, b in itertools.pairwise(sizes)]
    mid = sorted(growth)[len(growth) // 2] if growth else 0
    return {
        "entries": entries,
        "memoryBytes": len(text.encode()),
        "runs": runs,
        "bareWriteMsMedian": round(sorted(bare)[len(bare) // 2] * 1000, 1),
        "journaledRunMsMedian": round(sorted(journaled)[len(journaled) // 2] * 1000, 1),
        "dbGrowthPerRunBytesMedian": mid,
        "dbBytesAfter": sizes[-1],
    }


def journal_cost_commands(entries: int, runs: int, tmp: Path) -> dict[str, Any]:
    """Real runs on a large MEMORY.md: ``import FILE --apply`` of one new row, then
    ``memory set ID --pin`` (each rewrites MEMORY.md), in this process. Per run: the whole
    command's time, the time inside the write-ahead commit (intent and images, the file
    writes, the closing transaction, pruning), the file writes alone, and the database's growth
    (after a checkpoint)."""
    from memcore.journal import wal

    dest = tmp / "cost-cli"
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "memory").mkdir(parents=True)
    ws = Workspace(dest)
    ws.memory_md.write_text(
        "# Long-Term Memory\n\n"
        + "".join(
            f"- Fact {i}: service-{i % 97} uses port {1000 + i} and owner team-{i % 13}.\n"
            for i in range(entries)
        ),
        encoding="utf-8",
    )
    timing = {"commit": 0.0, "files": 0.0}
    real_commit, real_write = wal.commit_run, wal.atomic_write_bytes

    def timed_commit(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return real_commit(*a, **k)
        finally:
            timing["commit"] += time.perf_counter() - t0

    def timed_write(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return real_write(*a, **k)
        finally:
            timing["files"] += time.perf_counter() - t0

    def db_size() -> int:
        if not ws.db_path.exists():
            return 0
        conn = sqlite3.connect(ws.db_path)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        return ws.db_path.stat().st_size

    rows: dict[str, list[dict[str, float]]] = {"import": [], "memory set": []}
    wal.commit_run, wal.atomic_write_bytes = timed_commit, timed_write  # type: ignore[assignment]
    try:
        run_cli(ws, "memory", "status")  # the database exists before the first measured run
        for i in range(runs):
            src = tmp / "cost-row.jsonl"
            row = {"text": f"Imported fact {i} for the cost run.", "created_at": "2026-10-01"}
            src.write_text(json.dumps(row) + "\n", encoding="utf-8")
            for kind, args in (
                ("import", ["import", str(src), "--apply"]),
                ("memory set", ["memory", "set", _id_of(ws, f"Fact {i}:"), "--pin"]),
            ):
                size0 = db_size()
                timing.update(commit=0.0, files=0.0)
                t0 = time.perf_counter()
                code, out = run_cli(ws, *args)
                wall = time.perf_counter() - t0
                assert code == 0, out
                rows[kind].append(
                    {
                        "wall": wall,
                        "commit": timing["commit"],
                        "files": timing["files"],
                        "growth": db_size() - size0,
                    }
                )
    finally:
        wal.commit_run, wal.atomic_write_bytes = real_commit, real_write  # type: ignore[assignment]

    def med(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    return {
        kind: {
            "runs": len(rs),
            "commandMsMedian": round(med([r["wall"] for r in rs]) * 1000, 1),
            "commitMsMedian": round(med([r["commit"] for r in rs]) * 1000, 1),
            "fileWritesMsMedian": round(med([r["files"] for r in rs]) * 1000, 1),
            "dbGrowthBytesMedian": int(med([r["growth"] for r in rs])),
            "memoryBytes": ws.memory_md.stat().st_size,
        }
        for kind, rs in rows.items()
    }


def _id_of(ws: Workspace, prefix: str) -> str:
    from memcore.workspace.entries import parse

    doc = parse(ws.memory_md.read_text(encoding="utf-8"))
    return next(e.id for e in doc.entries if e.text.startswith(prefix))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--scenarios", default="promote,dream-apply,dream-auto,undo,import,restore,memory-set"
    )
    ap.add_argument("--random", type=int, default=20, help="random kills per scenario")
    ap.add_argument("--stride", type=int, default=1, help="every N-th kill point only")
    ap.add_argument("--entries", type=int, default=20000)
    ap.add_argument("--cost-runs", type=int, default=10)
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-crash", action="store_true")
    args = ap.parse_args()
    if shutil.which("strace") is None and not args.skip_crash:
        sys.exit("strace is needed (apt-get install strace)")
    with tempfile.TemporaryDirectory(prefix="memcore-faults-") as tmp_name:
        tmp = Path(tmp_name)
        out: dict[str, Any] = {}
        if not args.skip_crash:
            out["crash"] = crash_safety(args.scenarios.split(","), args.random, args.stride, tmp)
        out["undoFidelity"] = undo_fidelity(tmp)
        fid = out["undoFidelity"]
        bad = [k for k, same in fid.items() if not same]
        print(f"undo fidelity: {len(fid)} kinds, {len(bad)} mismatches {bad}", flush=True)
        if not args.skip_cost:
            out["cost"] = journal_cost(args.entries, args.cost_runs, tmp)
            print("journal cost:", out["cost"], flush=True)
            out["costCommands"] = journal_cost_commands(args.entries, args.cost_runs, tmp)
            print("journal cost in commands:", out["costCommands"], flush=True)
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
