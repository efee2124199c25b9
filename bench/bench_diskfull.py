"""A full disk and a read-only workspace at every step of a run.

    python bench/bench_diskfull.py [--scenarios promote,dream-auto,import,undo]
                                   [--stride 1] [--erofs-stride 4] [--skip-sweep]

The scenarios and the prepared workspace are those of ``bench/bench_faults.py``
(``memory promote --apply``, ``dream --auto``, ``import FILE --apply`` and ``undo`` of a
``dream --auto`` run). Each command is traced once to list its mutating system calls; then:

- **ENOSPC sweep**: on a fresh copy for each of them in turn, strace makes that call fail with
  ENOSPC (``-e inject=SYSCALL:error=ENOSPC:when=N``; for pwrite64, fsync and fdatasync, the
  database's writes, ``when=N+``: that call and every later one of its kind fail, as on a disk
  that stays full). Calls that cannot fail with ENOSPC (unlink) are skipped.
- **EROFS sweep** (every ``--erofs-stride``-th call that creates, renames or removes a name):
  the call fails with EROFS, as when the folder becomes read-only at that step.
- **tmpfs** (as root; skipped with the reason otherwise): the workspace on a small tmpfs
  (``mount -t tmpfs -o size=4m``) filled up to leave 0, 4, 8, 16, ... 512 KiB free.
- **read-only**: the workspace folder and its files made read-only with chmod, only
  ``memcore.sqlite`` made read-only, and the workspace on a read-only bind mount. The command
  runs without CAP_DAC_OVERRIDE and CAP_FOWNER (setpriv), since root ignores file modes.

After each failed step: the exit code is 0 with MEMORY.md as after an uninterrupted run, or
1 with one line on stderr and no traceback; with exit 1, MEMORY.md, the daily note, the
archive and the recall store are byte-identical to before and no file is left that was not
there (no temp file, nothing moved aside). Then, with space (or write access) back, the checks
of ``bench_faults.py`` after a kill: the next run converges to the uninterrupted run's
MEMORY.md, no run is left pending, undoing every run gives back the original bytes, no recall
is marked promoted without its entry, no lock or temp file is left.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_faults as bf

from memcore.workspace.core import Workspace

DROP_CAPS = ["setpriv", "--bounding-set=-dac_override,-fowner,-dac_read_search", "--"]
FILES = (
    "MEMORY.md",
    "memory/2026-11-28.md",
    "memory/.dreams/archive.md",
    "memory/.dreams/short-term-recall.json",
)
# SQLite's side files and the quick_check stamp may appear or go; anything else new is a leak
TRANSIENT = {
    "memory/.dreams/memcore.sqlite-wal",
    "memory/.dreams/memcore.sqlite-shm",
    "memory/.dreams/memcore.sqlite-journal",
    "memory/.dreams/memcore.sqlite.checked",
    # the pending-run marker stays when the full or read-only database could not record the
    # rollback (the files are back); the checks after it see the next run finish it
    "memory/.dreams/journal.pending",
}
ENOSPC_CALLS = {
    "write",
    "pwrite64",
    "openat",
    "mkdir",
    "mkdirat",
    "link",
    "linkat",
    "rename",
    "renameat",
    "renameat2",
    "fsync",
    "fdatasync",
    "ftruncate",
}
PERSISTENT = {"pwrite64", "fsync", "fdatasync"}
EROFS_CALLS = {
    "openat",
    "mkdir",
    "mkdirat",
    "link",
    "linkat",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
}
FREE_KIB = (0, 4, 8, 16, 32, 48, 64, 96, 128, 256, 512)


def snapshot(ws: Workspace) -> dict[str, bytes | None]:
    return {p: bf.read(ws.root / p) for p in FILES}


def names(ws: Workspace) -> set[str]:
    out = set()
    for dirpath, _dirs, files in os.walk(ws.root):
        for n in files:
            out.add(os.path.relpath(os.path.join(dirpath, n), ws.root))
    return out


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def judge_failure(
    sc: bf.Scenario,
    ws: Workspace,
    proc: subprocess.CompletedProcess[str],
    before_files: dict[str, bytes | None],
    before_names: set[str],
) -> list[str]:
    """The checks right after the failed step (see the module docstring)."""
    bad: list[str] = []
    err = proc.stderr.strip()
    if "Traceback" in proc.stderr:
        bad.append(f"traceback: {bf.tail(proc.stderr)}")
    if proc.returncode == 0:
        if bf.read(ws.memory_md) != sc.after:
            bad.append("exit 0 but MEMORY.md is not the uninterrupted run's")
        return bad
    if proc.returncode != 1:
        bad.append(f"exit {proc.returncode}: {bf.tail(proc.stderr)}")
    if len(err.splitlines()) != 1:
        bad.append(f"{len(err.splitlines())} lines on stderr: {bf.tail(proc.stderr)}")
    now = snapshot(ws)
    for p, data in before_files.items():
        if now[p] != data:
            bad.append(f"{p} changed although the command failed")
    new = names(ws) - before_names - TRANSIENT
    if new:
        bad.append(f"left behind: {sorted(new)}")
    return bad


def sweep(
    sc: bf.Scenario, tmp: Path, base: Path, origin: dict[str, bytes | None], error: str, stride: int
) -> dict[str, Any]:
    calls = ENOSPC_CALLS if error == "ENOSPC" else EROFS_CALLS
    points = [(s, n) for s, n in sc.points if s in calls][::stride]
    violations = exit1 = exit0 = 0
    examples: list[str] = []
    for syscall, n in points:
        ws = bf.fresh(sc, tmp, "run")
        before_files, before_names = snapshot(ws), names(ws)
        when = f"{n}+" if error == "ENOSPC" and syscall in PERSISTENT else str(n)
        proc = run(
            [
                "strace",
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                f"trace={syscall}",
                "-e",
                f"inject={syscall}:error={error}:when={when}",
                *bf.MEMCORE,
                "-w",
                str(ws.root),
                *sc.args,
            ]
        )
        exit0 += proc.returncode == 0
        exit1 += proc.returncode == 1
        bad = judge_failure(sc, ws, proc, before_files, before_names)
        bad += bf.check(sc, ws, base, origin)
        violations += bool(bad)
        examples += [f"{syscall}#{when}: {b}" for b in bad[:2]]
    return {
        "steps": len(points),
        "exit0": exit0,
        "exit1": exit1,
        "violations": violations,
        "examples": examples[:10],
    }


@contextlib.contextmanager
def mounted_tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(directory: Path, leave: int) -> Path:
    """A filler file that leaves ``leave`` bytes free on ``directory``'s filesystem."""
    filler = directory / "filler"
    with open(filler, "wb") as fh:
        free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
        chunk = b"\0" * 65536
        while free - leave >= len(chunk):
            fh.write(chunk)
            free -= len(chunk)
        with contextlib.suppress(OSError):
            fh.write(b"\0" * max(0, free - leave))
    return filler


def tmpfs_levels(sc: bf.Scenario, tmp: Path, base: Path, origin: dict[str, bytes | None]) -> Any:
    if os.geteuid() != 0:
        return {"skipped": "not root: mounting a tmpfs needs root"}
    violations = failed = 0
    examples: list[str] = []
    for kib in FREE_KIB:
        with mounted_tmpfs(tmp / "mnt", "4m") as mnt:
            dest = mnt / "ws"
            shutil.copytree(sc.template, dest)
            ws = Workspace(dest)
            before_files, before_names = snapshot(ws), names(ws)
            filler = fill(mnt, kib * 1024)
            proc = run([*bf.MEMCORE, "-w", str(ws.root), *sc.args])
            failed += proc.returncode != 0
            bad = judge_failure(sc, ws, proc, before_files, before_names)
            filler.unlink()
            bad += bf.check(sc, ws, base, origin)
            violations += bool(bad)
            examples += [f"{kib} KiB free: {b}" for b in bad[:2]]
    return {
        "levels": len(FREE_KIB),
        "failed": failed,
        "violations": violations,
        "examples": examples[:10],
    }


def _chmod_tree(root: Path, writable: bool) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for n in files:
            p = Path(dirpath) / n
            p.chmod(0o644 if writable else 0o444)
        Path(dirpath).chmod(0o755 if writable else 0o555)


def read_only(sc: bf.Scenario, tmp: Path, base: Path, origin: dict[str, bytes | None]) -> Any:
    out: dict[str, Any] = {}
    cases = ["folder (chmod)", "memcore.sqlite (chmod)"]
    if os.geteuid() == 0:
        cases.append("read-only bind mount")
    for case in cases:
        ws = bf.fresh(sc, tmp, "run")
        before_files, before_names = snapshot(ws), names(ws)
        target = ws.root
        if case == "folder (chmod)":
            _chmod_tree(ws.root, writable=False)
        elif case == "memcore.sqlite (chmod)":
            if not ws.db_path.exists():
                out[case] = {"skipped": "no memcore.sqlite before this command"}
                continue
            ws.db_path.chmod(0o444)
        else:
            target = tmp / "ro-mount"
            target.mkdir(exist_ok=True)
            subprocess.run(["mount", "--bind", str(ws.root), str(target)], check=True)
            subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], check=True)
        try:
            proc = run([*DROP_CAPS, *bf.MEMCORE, "-w", str(target), *sc.args])
        finally:
            if case == "read-only bind mount":
                subprocess.run(["umount", str(target)], check=False)
        bad = judge_failure(sc, ws, proc, before_files, before_names)
        if proc.returncode == 0:
            bad.append("exit 0 on a read-only workspace")
        message = proc.stderr.strip().splitlines()[-1:] or [""]
        _chmod_tree(ws.root, writable=True)
        bad += bf.check(sc, ws, base, origin)
        out[case] = {"exit": proc.returncode, "message": message[0][:200], "violations": bad}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", default="promote,dream-auto,import,undo")
    ap.add_argument("--stride", type=int, default=1, help="every N-th ENOSPC step only")
    ap.add_argument("--erofs-stride", type=int, default=4, help="every N-th EROFS step only")
    ap.add_argument("--skip-sweep", action="store_true", help="tmpfs and read-only cases only")
    args = ap.parse_args()
    if shutil.which("strace") is None and not args.skip_sweep:
        sys.exit("strace is needed (apt-get install strace)")
    with tempfile.TemporaryDirectory(prefix="memcore-diskfull-") as tmp_name:
        tmp = Path(tmp_name)
        base = tmp / "base"
        bf.prepare(base)
        origin = {
            "memory": bf.read(base / "MEMORY.md"),
            "store": bf.read(base / "memory/.dreams/short-term-recall.json"),
        }
        report: dict[str, Any] = {}
        for name in args.scenarios.split(","):
            sc = bf.SCENARIOS[name]
            bf.build(sc, tmp, base)
            r: dict[str, Any] = {}
            if not args.skip_sweep:
                r["enospc"] = sweep(sc, tmp, base, origin, "ENOSPC", args.stride)
                r["erofs"] = sweep(sc, tmp, base, origin, "EROFS", args.erofs_stride)
            r["tmpfs"] = tmpfs_levels(sc, tmp, base, origin)
            r["readOnly"] = read_only(sc, tmp, base, origin)
            report[name] = r
            print(name, json.dumps(r, indent=2), flush=True)
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
