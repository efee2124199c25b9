"""Embedding throughput per backend, MiniLM batching, and the vector cache at 20,000 entries.

    python bench/bench_embed.py [--backends hashing,minilm,use-m3] [--n 2000] [--reps 3]
                                [--cache 20000] [--no-batching]

* Throughput: entries/s embedding ``--n`` realistic memory sentences (8-40 words), per backend
  (use-m3 with 1 and 2 worker threads), best and median of ``--reps`` runs after a warm-up,
  with the CPU seconds the run used and the cores other processes used meanwhile ("foreign
  cores", from /proc/stat minus our own CPU time): on a shared machine, wall-clock figures are
  only as good as the foreign load is low; entries per CPU-second barely depend on it.
* MiniLM batching: the recipe memcore used before (sorted by characters, batches of 32, padded
  to the batch) against the current one (tokenised once, sorted by token count, batches of 16
  or 32 padded to the batch's longest text).
* Cache: ``dream``'s embedding step (memcore.dream.plan._embed with a real memcore.sqlite) on
  ``--cache`` entries with the default model: cold, then a second run with nothing changed.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memcore.search.embeddings import get_embedder  # noqa: E402

HZ = os.sysconf("SC_CLK_TCK")

_SUBJ = ["The user", "Alice", "Bob", "The team", "The on-call engineer", "Our CTO", "The client",
         "The data team", "Maria", "The release manager"]  # fmt: skip
_PREF = ["prefers {a} over {b} for {ctx}", "wants {a} to be used instead of {b} in {ctx}",
         "asked us to stop using {b} and switch to {a} for {ctx}",
         "does not like {b} and always picks {a} when working on {ctx}"]  # fmt: skip
_TOOLS = [("pnpm", "npm"), ("ruff", "flake8"), ("pytest", "unittest"), ("Poetry", "pip-tools"),
          ("tabs", "spaces"), ("dark mode", "light mode"), ("short answers", "long explanations"),
          ("PostgreSQL", "MySQL"), ("GitHub Actions", "Jenkins"), ("Rust", "C++"),
          ("vim", "VS Code"), ("squash merges", "merge commits"),
          ("British spelling", "American spelling")]  # fmt: skip
_CTX = ["every JavaScript project", "the billing service", "internal tools", "the data pipeline",
        "documentation", "the mobile app", "the monorepo", "scripts in the ops folder",
        "anything customer facing", "the Go microservices"]  # fmt: skip
_FACT = ["The {env} server runs {rt} {v} behind an nginx reverse proxy",
         "The {env} database is {db} {v} and is backed up every {n} hours",
         "Deploys to {env} happen only on {day} after the {t} stand-up",
         "The {env} cluster has {n} nodes and autoscales up to {m} during peak traffic",
         "Logs from {env} are kept for {n} days in the central logging bucket",
         "The {env} API rate limit is {n} requests per minute per token",
         "The {env} environment uses feature flags stored in LaunchDarkly under the {svc} "
         "project"]  # fmt: skip
_ENV = ["staging", "production", "dev", "QA", "sandbox", "preview"]
_RT = ["Node", "Python", "Java", "Ruby", "Go", ".NET"]
_DB = ["PostgreSQL", "MySQL", "Redis", "MongoDB", "ClickHouse"]
_DAY = ["Tuesdays", "Thursdays", "Mondays", "Wednesdays", "Fridays"]
_TIME = ["morning", "afternoon", "weekly", "daily"]
_SVC = ["billing", "auth", "search", "checkout", "notifications", "reporting"]
_EXTRA = ["", "", " according to the last incident review",
          " as agreed in the March planning meeting",
          ", which was confirmed again by the platform team last week",
          " unless the release manager explicitly approves an exception in the channel",
          ", and this must not change without telling the security team first",
          " because the previous setup caused repeated outages during the holiday season and "
          "nobody wants that again"]  # fmt: skip
_TODO = ["Remember to rotate the {svc} API keys before the end of {mon}",
         "Open question: should the {svc} service move to {db} next quarter",
         "The {svc} integration tests are flaky on CI and take about {n} minutes",
         "{s} owns the {svc} service and reviews all of its pull requests",
         "Never commit secrets for the {svc} service; they live in the vault under "
         "{svc}/prod"]  # fmt: skip
_MON = ["January", "March", "June", "September", "November"]


def corpus(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct, deterministic agent-memory sentences of 8-40 words."""
    rnd = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        k = rnd.random()
        if k < 0.33:
            a, b = rnd.choice(_TOOLS)
            s = f"{rnd.choice(_SUBJ)} " + rnd.choice(_PREF).format(a=a, b=b, ctx=rnd.choice(_CTX))
        elif k < 0.75:
            s = rnd.choice(_FACT).format(
                env=rnd.choice(_ENV), rt=rnd.choice(_RT), v=rnd.randint(8, 22),
                db=rnd.choice(_DB), n=rnd.randint(2, 90), m=rnd.randint(91, 400),
                day=rnd.choice(_DAY), t=rnd.choice(_TIME), svc=rnd.choice(_SVC),
            )  # fmt: skip
        else:
            s = rnd.choice(_TODO).format(
                svc=rnd.choice(_SVC), mon=rnd.choice(_MON), db=rnd.choice(_DB),
                n=rnd.randint(2, 40), s=rnd.choice(_SUBJ),
            )  # fmt: skip
        s = s + rnd.choice(_EXTRA) + "."
        if 8 <= len(s.split()) <= 40 and s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _busy() -> float:
    with open("/proc/stat") as fh:
        f = list(map(int, fh.readline().split()[1:]))
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / HZ  # user nice system irq softirq


def _own() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(fn: Callable[[], object], n: int, reps: int) -> dict[str, float]:
    """Best and median entries/s of ``reps`` calls of ``fn`` (after one warm-up call elsewhere),
    with CPU seconds per run and the foreign cores of the best run."""
    runs = []
    for _ in range(reps):
        b0, c0, t0 = _busy(), _own(), time.perf_counter()
        fn()
        wall, cpu = time.perf_counter() - t0, _own() - c0
        foreign = max(0.0, (_busy() - b0 - cpu) / wall)
        runs.append((n / wall, cpu, foreign))
    best = max(runs)
    return {
        "best": best[0],
        "median": statistics.median(r[0] for r in runs),
        "cpu_s": min(r[1] for r in runs),
        "per_cpu_s": n / min(r[1] for r in runs),
        "foreign": best[2],
        "foreign_max": max(r[2] for r in runs),
    }


def _row(name: str, m: dict[str, float], load_s: float | None = None) -> None:
    load = f"{load_s:.1f}" if load_s is not None else "-"
    print(
        f"| {name} | {load} | {m['best']:.0f} | {m['median']:.0f} | {m['cpu_s']:.2f} | "
        f"{m['per_cpu_s']:.0f} | {m['foreign']:.2f} (max {m['foreign_max']:.2f}) |",
        flush=True,
    )


def throughput(backends: list[str], texts: list[str], reps: int) -> None:
    print(f"\n## Throughput: {len(texts)} entries, mean {_mean_words(texts):.1f} words")
    print("| backend | load s | best entries/s | median entries/s | CPU s per run | "
          "entries per CPU-s | foreign cores in best run |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name in backends:
        t0 = time.perf_counter()
        if name == "use-m3":
            from memcore.search.embeddings.use_m3 import UseM3Embedder

            for workers in (1, 2):
                emb = UseM3Embedder(workers=workers)
                load = time.perf_counter() - t0
                emb.embed(texts[:64])
                _row(
                    f"use-m3, {workers} worker(s)",
                    measure(lambda e=emb: e.embed(texts), len(texts), reps),
                    load,
                )
                t0 = time.perf_counter()
            continue
        emb = get_embedder(name)
        load = time.perf_counter() - t0
        fit = getattr(emb, "fit", None)
        if callable(fit):
            fit(texts)
        emb.embed(texts[:64])
        _row(name, measure(lambda e=emb: e.embed(texts), len(texts), reps), load)


def _mean_words(texts: list[str]) -> float:
    return sum(len(t.split()) for t in texts) / len(texts)


def minilm_batching(texts: list[str], reps: int) -> None:
    """Old recipe (characters, batch 32) against token-count sorting with batch 16 and 32."""
    from memcore.search.embeddings import onnx

    emb = onnx.MiniLMEmbedder()
    tok = emb._tok

    def char_sorted_32() -> np.ndarray:  # the recipe before token sorting, verbatim
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        try:
            out = np.zeros((len(texts), emb.dim), dtype=np.float32)
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for s in range(0, len(order), 32):
                idx = order[s : s + 32]
                enc = tok.encode_batch([texts[i] or " " for i in idx])
                ids = np.asarray([e.ids for e in enc], dtype=np.int64)
                mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
                feeds = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in emb._inputs:
                    feeds["token_type_ids"] = np.zeros_like(ids)
                hidden = emb._session.run(None, feeds)[0]
                m = mask[:, :, None].astype(np.float32)
                pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
                out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
            return out
        finally:
            tok.no_padding()

    def token_sorted(batch: int) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            saved = onnx.BATCH
            onnx.BATCH = batch
            try:
                return emb.embed(texts)
            finally:
                onnx.BATCH = saved

        return run

    same = float((char_sorted_32() * token_sorted(16)()).sum(axis=1).min())
    print(f"\n## MiniLM batching ({len(texts)} entries; min cosine old vs new recipe {same:.5f})")
    print("| recipe | load s | best entries/s | median entries/s | CPU s per run | "
          "entries per CPU-s | foreign cores in best run |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    # Interleave the recipes so a change in the machine's load hits them alike.
    results: dict[str, list[dict[str, float]]] = {}
    recipes = {
        "characters, batch 32 (before)": char_sorted_32,
        "tokens, batch 16 (now)": token_sorted(16),
        "tokens, batch 32": token_sorted(32),
    }
    for _ in range(reps):
        for name, fn in recipes.items():
            results.setdefault(name, []).append(measure(fn, len(texts), 1))
    for name, ms in results.items():
        best = max(ms, key=lambda m: m["best"])
        merged = dict(best)
        merged["median"] = statistics.median(m["best"] for m in ms)
        merged["cpu_s"] = min(m["cpu_s"] for m in ms)
        merged["per_cpu_s"] = len(texts) / merged["cpu_s"]
        merged["foreign_max"] = max(m["foreign"] for m in ms)
        _row(name, merged)


def cache(n: int, backend: str) -> None:
    """dream's embedding step on ``n`` entries: cold, then unchanged (all from the cache)."""
    from memcore.dream import tables
    from memcore.dream.plan import _embed
    from memcore.dream.settings import ConsolidationSettings
    from memcore.workspace.core import Workspace

    texts = corpus(n, seed=1)
    settings = ConsolidationSettings(embedder=backend)
    with tempfile.TemporaryDirectory(prefix="memcore-bench-embed-") as tmp:
        ws = Workspace(Path(tmp))
        print(f"\n## Vector cache: dream's embedding step, {n} entries, backend {backend}")
        print("| run | wall s | CPU s | foreign cores |")
        print("|---|---|---|---|")
        get_embedder(backend)  # load the model outside the timings
        for run in ("cold (embeds everything)", "second (nothing changed)", "third"):
            with tables.connect(ws) as conn:
                b0, c0, t0 = _busy(), _own(), time.perf_counter()
                emb, vecs = _embed(texts, settings, conn, True)
                wall, cpu = time.perf_counter() - t0, _own() - c0
            foreign = max(0.0, (_busy() - b0 - cpu) / wall)
            assert vecs.shape == (n, emb.dim)
            print(f"| {run} | {wall:.2f} | {cpu:.2f} | {foreign:.2f} |", flush=True)
        with tables.connect(ws) as conn:
            from memcore.search.embeddings import VectorCache, cache_id, content_sha1

            hashes = [content_sha1(t) for t in texts]
            t0 = time.perf_counter()
            have = VectorCache(conn).get_many(cache_id(emb), hashes)
            print(f"\nget_many of {len(have)} vectors: {time.perf_counter() - t0:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="hashing,minilm,use-m3")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cache", type=int, default=20000, help="0 skips the cache figure")
    ap.add_argument("--cache-backend", default="use-m3")
    ap.add_argument("--no-batching", action="store_true", help="skip the MiniLM batching table")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2-core VM)")
    texts = corpus(args.n)
    throughput([b for b in args.backends.split(",") if b], texts, args.reps)
    if not args.no_batching and "minilm" in args.backends:
        minilm_batching(texts, args.reps)
    if args.cache:
        cache(args.cache, args.cache_backend)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
