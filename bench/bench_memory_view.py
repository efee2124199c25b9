"""Figures for the Dreams page's Memory view (run: ``python bench/bench_memory_view.py``).

A workspace with 1,000 sessions (short transcripts of 4 messages), every one of them turned
into a session memory by real session dreams (the offline extractive model, 20 sessions a
run), served by a real gateway on 127.0.0.1 and read by headless Chromium:

1. First paint of the Memory view: from the start of the navigation to ``/#memory`` to the
   first frame that shows the project's first 50 sessions (target < 300 ms); each load in a
   new page, the first one (a gateway process that just started) reported on its own; the
   others start once the gateway is done with its start-up work (its search models).
2. A page of 50 summaries: from the click on "Older" (or "Newer") to the first frame that
   shows the new page, fetched from ``GET /api/recall`` and drawn (target < 300 ms).
3. ``GET /api/recall?memory=sessions&limit=50`` alone over HTTP, and the CPU seconds of the
   gateway's process for it.

Prints JSON. Options: ``--sessions N`` (default 1000), ``--repeats N`` (default 20).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from memcore.gateway.server import GatewayOptions, serve_in_thread
from memcore.gateway.workspaces import build_served
from memcore.sessions.run import execute
from memcore.workspace.core import Workspace

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
DECISIONS = [
    "We decided to keep payout batches under 5,000 lines so the bank accepts them.",
    "Let's always order ledger entries by created_at and then id.",
    "Never store webhook HMAC keys in env files; they live in Vault.",
    "We agreed to use the ECB reference rate at the 16:00 CET cut-off.",
    "The root cause was a stale lockfile; run uv lock after bumping deps.",
]

# records, in the page, when the Memory view first shows a list of sessions, and when each
# later draw of the list reaches the screen (the frame after the DOM change)
PAINT_PROBE = """
window.__paints = [];
new MutationObserver(() => {
  const body = document.getElementById('mem-body');
  if (!body || body.dataset.level !== 'project' || !body.querySelector('.mem-item')) return;
  const n = document.body.dataset.memoryLoaded;
  if (window.__lastDraw === n) return;
  window.__lastDraw = n;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    window.__paints.push(performance.now());
    console.debug('memcore-bench-paint');
  }));
}).observe(document, {subtree: true, childList: true, attributes: true});
"""


VIEWPORT = {"width": 1280, "height": 800}
NAV_DONE = "performance.getEntriesByType('navigation')[0].responseEnd"
RECALL_DONE = (
    "Math.max(...performance.getEntriesByType('resource')"
    ".filter((e) => e.name.includes('/api/recall')).map((e) => e.responseEnd))"
)
# the request waterfall: when the first /api/recall request went out, and when the last of
# the page's own files (stylesheet, scripts: the HTML itself when they are inlined) had arrived
RECALL_SENT = (
    "Math.min(...performance.getEntriesByType('resource')"
    ".filter((e) => e.name.includes('/api/recall')).map((e) => e.startTime))"
)
FILES_DONE = (
    f"Math.max({NAV_DONE}, ...performance.getEntriesByType('resource')"
    ".filter((e) => e.name.includes('/static/')).map((e) => e.responseEnd))"
)


def build(base: Path, n: int) -> tuple[Workspace, dict[str, float]]:
    root = base / "ws"
    (root / "memory").mkdir(parents=True)
    folder = root / "sessions"
    folder.mkdir()
    for i in range(n):
        t = NOW - timedelta(days=3, minutes=7 * i)
        lines = []
        turns = [
            (f"Session {i}: {DECISIONS[i % len(DECISIONS)]}", "Got it, I'll update the docs."),
            ("Thanks, that is all for today.", "Happy to help."),
        ]
        for user, assistant in turns:
            lines.append({"role": "user", "content": user, "ts": t.isoformat()})
            t += timedelta(minutes=1)
            lines.append({"role": "assistant", "content": assistant, "ts": t.isoformat()})
            t += timedelta(minutes=1)
        (folder / f"s{i:04d}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
        )
    ws = Workspace(root)
    t0, c0 = time.perf_counter(), time.process_time()
    runs = 0
    while True:
        report = execute(ws, now=NOW)
        runs += 1
        if report["status"] != "ok":
            raise SystemExit(f"session dream {report['status']}: {report.get('error')}")
        if not report["reviewed"]:
            break
    return ws, {
        "dream_runs": runs,
        "dream_wall_s": round(time.perf_counter() - t0, 1),
        "dream_cpu_s": round(time.process_time() - c0, 1),
    }


def measure(ws: Workspace, n: int, repeats: int) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    opts = GatewayOptions(host="127.0.0.1", port=0, token="T", scheduler=False)
    out: dict[str, object] = {}
    with serve_in_thread(build_served([(None, ws.root)]), opts) as gw:
        base = f"http://127.0.0.1:{gw.port}"
        with httpx.Client(base_url=base, timeout=60) as client:
            walls, cpus = [], []
            for i in range(repeats):
                c0, t0 = time.process_time(), time.perf_counter()
                cursor = 50 * (i % (n // 50))
                res = client.get(f"/api/recall?memory=sessions&limit=50&cursor={cursor}")
                walls.append((time.perf_counter() - t0) * 1000)
                cpus.append((time.process_time() - c0) * 1000)
                assert res.status_code == 200 and len(res.json()["items"]) == 50, res.text
            out["api_page_of_50_ms"] = stats(walls)
            out["api_page_of_50_cpu_ms"] = stats(cpus)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            try:
                firsts, pages, html_ms, api_ms, gw_cpu = [], [], [], [], []
                sent_ms, files_ms = [], []
                for n in range(1 + max(3, repeats // 2)):
                    if n == 1:  # the loads after the first: a gateway done with its start-up
                        out["waited_for_gateway_startup_s"] = settle()
                    page = browser.new_page(viewport=VIEWPORT, bypass_csp=True)
                    page.add_init_script(PAINT_PROBE)
                    c0 = time.process_time()
                    # waited for by its console line, not by polling from the page:
                    # playwright's polling script, injected into the new page right when
                    # the list is drawn, held its next frame back by up to 90 ms
                    with page.expect_console_message(lambda m: m.text == "memcore-bench-paint"):
                        page.goto(base + "/#memory", wait_until="commit")
                    gw_cpu.append((time.process_time() - c0) * 1000)
                    firsts.append(page.evaluate("window.__paints[0]"))
                    html_ms.append(page.evaluate(NAV_DONE))
                    api_ms.append(page.evaluate(RECALL_DONE))
                    sent_ms.append(page.evaluate(RECALL_SENT))
                    files_ms.append(page.evaluate(FILES_DONE))
                    assert page.locator("#mem-body .mem-item[data-session]").count() == 50
                    page.close()
                page = browser.new_page(viewport=VIEWPORT, bypass_csp=True)
                page.add_init_script(PAINT_PROBE)
                page.goto(base + "/#memory")
                page.wait_for_function("window.__paints.length >= 1")
                for i in range(repeats):
                    button = "#mem-next" if i % 2 == 0 else "#mem-prev"
                    seen = page.evaluate("window.__paints.length")
                    t0 = page.evaluate(
                        f"() => {{ const t = performance.now();"
                        f" document.querySelector('{button}').click(); return t; }}"
                    )
                    page.wait_for_function(f"window.__paints.length > {seen}")
                    pages.append(page.evaluate("window.__paints[window.__paints.length - 1]") - t0)
                    assert page.locator("#mem-body .mem-item[data-session]").count() == 50
                # the first load of a fresh gateway process opens its databases and warms
                # its caches: reported on its own, the median is of the loads after it
                out["first_paint_cold_gateway_ms"] = round(firsts[0], 1)
                out["first_paint_ms"] = stats(firsts[1:])
                out["first_paint_parts_ms"] = {
                    "page_html_received": stats(html_ms[1:]),
                    "first_recall_request_sent": stats(sent_ms[1:]),
                    "stylesheet_and_scripts_received": stats(files_ms[1:]),
                    "last_recall_answer_received": stats(api_ms[1:]),
                }
                # work done on the server whatever the load: CPU of this process (the
                # gateway's threads, and the playwright client's calls) during one load
                out["first_paint_gateway_cpu_ms"] = stats(gw_cpu[1:])
                out["page_of_50_ms"] = stats(pages)
            finally:
                browser.close()
    return out


def settle(window: float = 0.25, idle: float = 0.02, limit: float = 60.0) -> float:
    """Wait until this process (the gateway's threads) is idle: less than ``idle`` of a CPU
    over a ``window`` of wall time. A gateway that just started loads its search models in
    the background (1-2 CPU-s); loads timed meanwhile measure that start-up, not the page.
    Returns the seconds waited."""
    start = time.perf_counter()
    while time.perf_counter() < start + limit:
        c0 = time.process_time()
        time.sleep(window)
        if time.process_time() - c0 < idle * window:
            break
    return round(time.perf_counter() - start, 2)


def stats(values: list[float]) -> dict[str, float]:
    xs = sorted(values)
    return {
        "median": round(statistics.median(xs), 1),
        "p95": round(xs[min(len(xs) - 1, int(0.95 * len(xs)))], 1),
        "max": round(xs[-1], 1),
        "n": len(xs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument(
        "--keep",
        type=Path,
        help="build the workspace in this folder and keep it; a later run reuses it",
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = a.keep or Path(tmp)
        os.environ["MEMCORE_USER_DIR"] = str(base / "user")
        load_before = os.getloadavg()
        if a.keep and (base / "ws" / "sessions").is_dir():
            ws, seeding = Workspace(base / "ws"), {"reused": str(base)}
        else:
            base.mkdir(parents=True, exist_ok=True)
            ws, seeding = build(base, a.sessions)
        results = {
            "sessions": a.sessions,
            **seeding,
            "load_avg_before": [round(x, 2) for x in load_before],
            **measure(ws, a.sessions, a.repeats),
            "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
