"""Start-up time of the ``memcore`` command: ``--help`` of the root and of a group.

``memcore --help`` lists every command, so it imports every CLI module (never library code);
the target is <= 100 ms. The baseline rows show what the interpreter and click cost alone on
this machine. Wall time in a fresh interpreter (median and minimum of ``--runs``) and the
child's CPU time, which a busy machine inflates much less::

    python bench/bench_cli.py --runs 20
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "python -c 'import click' (baseline)": [sys.executable, "-c", "import click"],
    "memcore --help": [sys.executable, "-m", "memcore", "--help"],
    "memcore memory --help": [sys.executable, "-m", "memcore", "memory", "--help"],
    "memcore --version": [sys.executable, "-m", "memcore", "--version"],
}


# As installed: bytecode is cached (a PYTHONDONTWRITEBYTECODE environment would make every
# run compile every module).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], runs: int) -> tuple[float, float, float]:
    """Median and minimum wall ms, and median CPU ms (user + system) of the child."""
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=ENV)  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=ENV)
        walls.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()}, load average {load:.1f}"
    )
    print(f"{args.runs} runs, ms{'':25} wall median    min   cpu median")
    for name, cmd in CASES.items():
        med, low, cpu = measure(cmd, args.runs)
        print(f"{name:36} {med:11.1f} {low:6.1f} {cpu:12.1f}")


if __name__ == "__main__":
    main()
