"""Rebuild the example recall store ``examples/workspace/memory/.dreams/short-term-recall.json``.

The store is what three weeks of a coding agent's memory searches on the payrail-api workspace
would have left behind. Every simulated search goes through ``memcore.recall.record_recalls``
with its own fixed ``now``, so each field (counts, scores, query hashes, timestamps) is exactly
what memcore writes. Hits point at real line ranges of the daily notes: a target names a note and
a unique piece of text, and the chunk is the bullet or paragraph holding it.

The mix is deliberate (checked by ``--check`` and tests/test_examples.py):
- five facts recalled 9-10 times by 5+ different queries at ~0.92 relevance: they pass core's
  gates (minScore 0.75, 3 recalls, 2 queries) even when recency has decayed to 0, so
  ``memcore -w examples/workspace memory promote`` always shows candidates;
- six recalled 4-6 times late in November: candidates on 2026-11-30 that age out between
  2026-12-05 and 2027-01-02 as recency decays;
- many that fail a gate: one or two recalls, one query repeated, or low relevance.

Deterministic: the only randomness is a small score jitter from a fixed seed.
Usage: ``python examples/make_recall_store.py [--check]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from memcore.recall.scoring import Thresholds, rank
from memcore.recall.store import read_store, record_recalls
from memcore.workspace.core import Workspace, atomic_write_bytes

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE / "workspace"
TZ = ZoneInfo("Europe/Berlin")
YEAR = 2026
SEED = 20261130
CHECK_DATES = (
    "2026-11-30T09:00:00+00:00",
    "2027-06-01T09:00:00+00:00",
    "2028-11-30T09:00:00+00:00",
)

# name -> (file under the workspace, a text that occurs on exactly one line of it)
TARGETS: dict[str, tuple[str, str]] = {
    # recalled often, by many queries: pass the gates for good
    "idem_ttl": ("memory/2026-11-06.md", "Redis with a 72h TTL (was 24h)"),
    "migrate_rule": ("memory/2026-11-10.md", "Every Alembic migration runs"),
    "hmac_rotate": ("memory/2026-11-12.md", "HMAC key lives in AWS Secrets Manager"),
    "redis_noevict": ("memory/2026-11-18.md", "Idempotency keys must never be evicted"),
    "cutoff_tz": ("memory/2026-11-17.md", "the payout batch cutoff is 14:00 in Europe/Berlin"),
    # recalled a few times lately: candidates now, aging out within days
    "freeze": ("memory/2026-11-23.md", "Code freeze from Wednesday"),
    "pg_analyze": ("memory/2026-11-24.md", "vacuumdb --all --analyze-in-stages"),
    "staging_release": ("memory/2026-11-09.md", "Staging release:"),
    "webhooks_scale": ("memory/2026-11-21.md", "scale deploy/webhooks --replicas=4"),
    "recon_rerun": ("memory/2026-11-14.md", "make task NAME=reconcile_ledger"),
    "cutoff_design": ("memory/2026-11-13.md", "Payouts approved after the cutoff"),
    # everything else: side hits that fail a gate
    "pg_port": ("memory/2026-11-16.md", "POSTGRES_PORT=5433"),
    "logs_48h": ("memory/2026-11-05.md", "Logs only go back 48h"),
    "idem_question": ("memory/2026-11-05.md", "Why did the idempotency check"),
    "first_guess": ("memory/2026-11-05.md", "First guess: the Celery task"),
    "attempt_found": ("memory/2026-11-05.md", "Found: attempt 1 timed out"),
    "staging_v1104": ("memory/2026-11-05.md", "Staging is on v2026.11.04-2"),
    "redis_ttl_gone": ("memory/2026-11-06.md", "Confirmed in Redis"),
    "ttl_24h_cause": ("memory/2026-11-06.md", "Idempotency keys were stored with a 24h TTL"),
    "needs_review": ("memory/2026-11-06.md", "After the last retry the payout goes"),
    "burst_401": ("memory/2026-11-07.md", "burst of 401s"),
    "adyen_hmac_docs": ("memory/2026-11-07.md", "Adyen docs on HMAC"),
    "adyen_retries": ("memory/2026-11-07.md", "Adyen retries failed webhooks"),
    "countdown": ("memory/2026-11-08.md", "Our override: `countdown"),
    "dashboard_idea": ("memory/2026-11-08.md", "A small dashboard panel"),
    "explain": ("memory/2026-11-09.md", "`EXPLAIN ANALYZE` on the main query"),
    "concurrently": ("memory/2026-11-09.md", "Table is big, so `CREATE INDEX CONCURRENTLY`"),
    "recon_3h": ("memory/2026-11-09.md", "Nightly `reconcile_ledger` took 3h12m"),
    "sentry_3k9": ("memory/2026-11-09.md", "Sentry PAYRAIL-API-3K9"),
    "index_timing": ("memory/2026-11-10.md", "`make migrate-check` on the snapshot: index build"),
    "recon_41": ("memory/2026-11-11.md", "`reconcile_ledger` took 41 min"),
    "pain_version": ("memory/2026-11-11.md", "Open: which pain.001 version"),
    "admin_rights": ("memory/2026-11-11.md", "two people have Customer Area admin rights"),
    "xsd_fixture": ("memory/2026-11-13.md", "Validate each generated file against the XSD"),
    "ctrlsum": ("memory/2026-11-15.md", "`GrpHdr/CtrlSum`"),
    "schwifty": ("memory/2026-11-16.md", "IBAN validation with `schwifty`"),
    "xsd_first": ("memory/2026-11-16.md", "First XSD test passes"),
    "flaky_cutoff": ("memory/2026-11-17.md", "Fails only for runs between"),
    "prod_cutoff_fix": ("memory/2026-11-17.md", "Cutoff fix went to prod"),
    "incident_start": ("memory/2026-11-18.md", "10:42 RedisMemoryHigh fired"),
    "bigkeys": ("memory/2026-11-18.md", "--bigkeys"),
    "ttl_stays": ("memory/2026-11-19.md", "The TTL of idempotency keys stays 72h"),
    "pg_fallback_item": ("memory/2026-11-19.md", "Idempotency check falls back to Postgres"),
    "payout_attempts": ("memory/2026-11-19.md", "Table `payout_attempts"),
    "migrate_new_table": ("memory/2026-11-19.md", "`make migrate-check` OK (new table only)"),
    "pg16_staging": ("memory/2026-11-19.md", "Priya upgraded staging Postgres"),
    "xsd_builder": ("memory/2026-11-20.md", "Put the XSD validation in the builder"),
    "idem_url": ("memory/2026-11-20.md", "`IDEMPOTENCY_REDIS_URL` is a new setting"),
    "staging_1120": ("memory/2026-11-20.md", "Staging deployed with"),
    "lag_page": ("memory/2026-11-21.md", "Oldest webhook job 9 minutes old"),
    "bluegreen": ("memory/2026-11-22.md", "RDS blue/green deployment"),
    "plans_check": ("memory/2026-11-22.md", "Query plans of the reconciliation query"),
    "copy_keys": ("memory/2026-11-23.md", "copied with a one-off script"),
    "fallback_merged": ("memory/2026-11-23.md", "Merged; the Postgres fallback"),
    "flag_off_404": ("memory/2026-11-24.md", "Endpoint PR (#1218"),
    "freeze_deadline": ("memory/2026-11-25.md", "deadline 12:00 for merges"),
    "export_reminder": ("memory/2026-11-25.md", "Reminder to myself: the export uses"),
    # not daily notes: a search returns them, the recall store must ignore them
    "oncall_lag": ("memory/oncall.md", "**WebhookQueueLag**"),
    "oncall_hmac": ("memory/oncall.md", "**WebhookAuthFailures**"),
    "oncall_redis": ("memory/oncall.md", "**RedisMemoryHigh**"),
    "deploy_rules": ("memory/deploy.md", "Migrations ship one release before"),
    "deploy_scale": ("memory/deploy.md", "kubectl -n payrail rollout status"),
    "ledger_recon": ("memory/ledger.md", "The nightly `reconcile_ledger` task"),
    "memory_idem": ("MEMORY.md", "Every public POST endpoint requires"),
}

# (Berlin local "MM-DD HH:MM", query, "target:score target:score ...")
SEARCHES: list[tuple[str, str, str]] = [
    (
        "11-06 10:05",
        "idempotency key ttl redis",
        "idem_question:.71 first_guess:.58 memory_idem:.74",
    ),
    ("11-06 16:30", "celery retry duplicate payout", "attempt_found:.83 idem_ttl:.79 logs_48h:.60"),
    ("11-09 09:20", "deploy to staging command", "staging_v1104:.81"),
    ("11-09 10:40", "how long do idempotency keys live", "idem_ttl:.93 ttl_24h_cause:.80"),
    ("11-09 14:10", "reconcile_ledger slow sequential scan", "explain:.88 ledger_recon:.71"),
    ("11-09 16:00", "HMAC signature mismatch 401 webhooks", "burst_401:.86 sentry_3k9:.74"),
    ("11-10 09:30", "create index concurrently alembic", "concurrently:.84"),
    ("11-10 15:00", "migration approval process", "migrate_rule:.95"),
    ("11-10 16:20", "payout retry window", "idem_ttl:.91 countdown:.67 logs_48h:.58"),
    ("11-11 10:00", "migrate-check staging snapshot", "migrate_rule:.92 index_timing:.77"),
    ("11-11 11:30", "sepa pain.001 version partner bank", "pain_version:.87"),
    ("11-11 14:00", "who can rotate adyen hmac key", "admin_rights:.85 adyen_hmac_docs:.69"),
    ("11-12 09:15", "idempotency key ttl", "idem_ttl:.94 ttl_24h_cause:.81"),
    ("11-12 14:30", "rotate webhook hmac key", "hmac_rotate:.93 oncall_hmac:.80"),
    (
        "11-12 16:45",
        "backwards compatible migration expand contract",
        "migrate_rule:.91 deploy_rules:.86",
    ),
    ("11-13 09:00", "webhook pods restart secret", "hmac_rotate:.90 sentry_3k9:.62"),
    ("11-13 10:30", "adyen hmac secret name", "hmac_rotate:.94"),
    ("11-13 14:00", "sepa export cutoff banking day", "cutoff_design:.89"),
    ("11-13 15:00", "needs_review alert", "needs_review:.82 dashboard_idea:.60"),
    ("11-14 07:05", "recon report missing", "ledger_recon:.70 recon_41:.63"),
    ("11-14 07:40", "rerun reconcile_ledger by hand", "recon_rerun:.90 recon_3h:.61"),
    ("11-16 10:30", "docker compose port 5432 already in use", "pg_port:.91"),
    ("11-16 11:00", "migration checklist", "migrate_rule:.94 deploy_rules:.78"),
    ("11-16 13:00", "iban validation python", "schwifty:.90"),
    ("11-16 15:20", "ctrlsum decimals pain.001", "ctrlsum:.92 xsd_first:.72"),
    ("11-16 17:00", "docker compose port 5432 already in use", "pg_port:.90"),
    ("11-17 09:40", "batch cutoff time", "cutoff_design:.88"),
    ("11-17 11:30", "test_payout_batch_cutoff flaky", "flaky_cutoff:.90 cutoff_design:.70"),
    ("11-17 12:15", "docker compose port 5432 already in use", "pg_port:.89"),
    ("11-17 14:00", "cutoff timezone dst", "cutoff_tz:.95 flaky_cutoff:.84"),
    ("11-17 15:00", "release prod command", "staging_release:.78 prod_cutoff_fix:.80"),
    ("11-17 16:10", "hmac key rotation procedure", "hmac_rotate:.95 oncall_hmac:.83"),
    ("11-18 09:00", "payout cutoff 14:00 berlin", "cutoff_tz:.93 cutoff_design:.81"),
    ("11-18 10:50", "redis memory full eviction policy", "redis_ttl_gone:.66"),
    ("11-18 11:10", "idempotency key ttl", "idem_ttl:.92 ttl_24h_cause:.85 logs_48h:.63"),
    ("11-18 13:00", "redis eviction policy", "redis_noevict:.94 incident_start:.75"),
    ("11-18 15:30", "redis-cli bigkeys", "bigkeys:.86 oncall_redis:.79"),
    ("11-18 16:40", "payout retry window", "idem_ttl:.95 logs_48h:.61"),
    ("11-19 09:30", "redis eviction incident timeline", "incident_start:.88 redis_noevict:.82"),
    ("11-19 10:20", "noeviction redis idempotency", "redis_noevict:.96"),
    ("11-19 11:30", "hard-coded utc offset", "cutoff_tz:.90"),
    ("11-19 14:00", "payout_attempts table", "payout_attempts:.89"),
    ("11-19 15:00", "migrate-check staging snapshot", "migrate_rule:.90 migrate_new_table:.83"),
    ("11-19 16:10", "postgres 16 upgrade staging", "pg16_staging:.90"),
    ("11-20 10:00", "adyen hmac secret name", "hmac_rotate:.95"),
    ("11-20 11:00", "cutoff europe/berlin zoneinfo", "cutoff_tz:.94 cutoff_design:.78"),
    ("11-20 12:00", "cutoff timezone dst", "cutoff_tz:.94"),
    ("11-20 13:30", "how long do idempotency keys live", "idem_ttl:.93 ttl_stays:.88"),
    ("11-20 14:00", "IDEMPOTENCY_REDIS_URL setting", "idem_url:.91 redis_noevict:.77"),
    ("11-20 14:30", "xsd validation sepa builder", "xsd_builder:.90 xsd_fixture:.84"),
    ("11-20 15:10", "deploy staging release tag", "staging_release:.90 staging_1120:.86"),
    ("11-20 16:00", "redis memory alert threshold", "redis_noevict:.89 oncall_redis:.82"),
    ("11-21 16:08", "webhook queue lag", "oncall_lag:.84 adyen_retries:.60"),
    ("11-21 16:12", "scale webhooks deployment kubectl", "deploy_scale:.70"),
    ("11-21 18:00", "webhook hmac secret restart pods", "hmac_rotate:.92"),
    ("11-22 11:00", "postgres 16 upgrade plan", "pg16_staging:.86 bluegreen:.90"),
    ("11-22 11:30", "backwards compatible migration expand contract", "migrate_rule:.93"),
    ("11-22 12:00", "scale webhooks replicas", "webhooks_scale:.90 lag_page:.76"),
    ("11-23 10:15", "black friday freeze", "freeze:.93"),
    ("11-23 10:30", "idempotency key ttl", "idem_ttl:.96 ttl_stays:.90"),
    ("11-23 14:00", "release staging smoke test", "staging_release:.88"),
    ("11-23 15:00", "cutoff europe/berlin zoneinfo", "cutoff_tz:.95"),
    ("11-23 20:00", "copy redis keys keep ttl", "copy_keys:.88"),
    ("11-23 21:00", "redis eviction policy", "redis_noevict:.93"),
    ("11-24 08:35", "postgres slow after upgrade sequential scans", "explain:.63 plans_check:.70"),
    ("11-24 09:30", "analyze after major postgres upgrade", "pg_analyze:.95"),
    ("11-24 10:00", "migration checklist", "migrate_rule:.94"),
    ("11-24 11:00", "deploy freeze dates", "freeze:.91"),
    ("11-24 12:00", "redis eviction policy", "redis_noevict:.94"),
    ("11-24 14:00", "webhook 404 flag off merchant", "flag_off_404:.85"),
    ("11-24 16:00", "alembic migration rules", "migrate_rule:.92"),
    ("11-25 09:00", "freeze deadline merges", "freeze:.88 freeze_deadline:.80"),
    ("11-25 10:00", "make release-staging", "staging_release:.92"),
    ("11-25 11:00", "vacuumdb analyze-in-stages", "pg_analyze:.94"),
    (
        "11-25 15:00",
        "sepa export cutoff 14:00",
        "cutoff_tz:.93 cutoff_design:.86 export_reminder:.80",
    ),
    ("11-25 15:30", "hmac key rotation procedure", "hmac_rotate:.94"),
    (
        "11-25 16:00",
        "idempotency key fallback postgres",
        "fallback_merged:.84 pg_fallback_item:.90",
    ),
    ("11-26 09:20", "recon report late what to do", "recon_rerun:.91 ledger_recon:.74"),
    ("11-26 10:00", "reconcile ledger rerun task", "recon_rerun:.92 recon_3h:.70"),
    ("11-26 11:00", "idempotency keys runbook", "idem_ttl:.92 redis_noevict:.88"),
    ("11-26 13:00", "hmac key rotation procedure", "hmac_rotate:.93"),
    ("11-26 14:00", "migration checklist", "migrate_rule:.91"),
    ("11-26 15:00", "cutoff timezone dst", "cutoff_tz:.94 flaky_cutoff:.82"),
    ("11-26 16:00", "pg16 vacuumdb analyze", "pg_analyze:.93"),
    ("11-26 17:00", "noeviction redis idempotency", "redis_noevict:.95 idem_url:.74"),
    ("11-26 18:00", "reconcile_ledger by hand", "recon_rerun:.93"),
    ("11-27 08:00", "freeze scaling allowed", "freeze:.90"),
    ("11-27 10:00", "payout cutoff 14:00 berlin", "cutoff_tz:.92"),
    ("11-27 12:00", "idempotency", "idem_ttl:.90 memory_idem:.88"),
    ("11-27 21:37", "webhook queue lag scale", "webhooks_scale:.93 lag_page:.80"),
    ("11-27 21:40", "kubectl scale webhooks replicas", "webhooks_scale:.92"),
    ("11-27 21:45", "scale webhooks during freeze", "webhooks_scale:.89 freeze:.84"),
    ("11-27 22:00", "webhook pods restart secret", "hmac_rotate:.90"),
    ("11-27 22:30", "redis memory alert threshold", "redis_noevict:.91"),
    ("11-27 23:00", "planner statistics after upgrade", "pg_analyze:.90"),
]


@dataclass(frozen=True)
class Chunk:
    path: str
    start: int  # 1-based, inclusive
    end: int
    text: str


def locate(root: Path, path: str, anchor: str) -> Chunk:
    """The bullet (with its indented continuation lines) or paragraph holding ``anchor``."""
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines) if anchor in line]
    if len(found) != 1:
        raise SystemExit(f"{path}: anchor {anchor!r} found on {len(found)} lines, need exactly 1")
    i = found[0]
    if lines[i].lstrip().startswith(("- ", "* ")) or lines[i][:1].isdigit():
        j = i
        while (
            j + 1 < len(lines)
            and lines[j + 1].startswith(" ")
            and lines[j + 1].strip()
            and not lines[j + 1].lstrip().startswith(("- ", "* "))
        ):
            j += 1
        start, end = i, j
    else:  # a paragraph: the run of non-blank lines around the anchor
        start = i
        while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith("#"):
            start -= 1
        end = i
        while end + 1 < len(lines) and lines[end + 1].strip():
            end += 1
    return Chunk(path, start + 1, end + 1, "\n".join(lines[start : end + 1]))


def when(stamp: str) -> datetime:
    """Berlin local ``MM-DD HH:MM`` of ``YEAR`` as an aware datetime."""
    day, clock = stamp.split()
    month, dom = (int(x) for x in day.split("-"))
    hour, minute = (int(x) for x in clock.split(":"))
    return datetime(YEAR, month, dom, hour, minute, tzinfo=TZ)


def build(root: Path, out: Path) -> dict[str, Any]:
    """Replay every search into a scratch workspace and copy the resulting store to ``out``."""
    rng = random.Random(SEED)
    chunks = {name: locate(root, path, anchor) for name, (path, anchor) in TARGETS.items()}
    stats = {"searches": 0, "hits": 0}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Workspace(Path(tmp))
        last = None
        for stamp, query, hits in SEARCHES:
            now = when(stamp)
            if last is not None and now <= last:
                raise SystemExit(f"searches out of order at {stamp}")
            last = now
            results = []
            for item in hits.split():
                name, score = item.split(":")
                c = chunks[name]
                if c.path.startswith("memory/20") and c.path[7:17] > now.date().isoformat():
                    raise SystemExit(f"{stamp} {query!r}: hit on {c.path} before that day")
                jitter = rng.uniform(-0.012, 0.012)
                results.append(
                    {
                        "path": c.path,
                        "startLine": c.start,
                        "endLine": c.end,
                        "score": round(min(0.97, max(0.55, float(score) + jitter)), 4),
                        "snippet": c.text,
                        "source": "memory",
                    }
                )
            res = record_recalls(scratch, query, results, now=now, max_entries=None)
            stats["searches"] += 1
            stats["hits"] += res.recorded
        data = scratch.store_path.read_bytes()
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, data)
    return stats


def summary(ws: Workspace) -> list[str]:
    """Candidates under core's thresholds at a few dates (what ``memory promote`` shows)."""
    store = read_store(ws)
    lines = [f"{len(store.entries)} entries, {store.invalid} invalid, updatedAt {store.updated_at}"]
    for iso in CHECK_DATES:
        now = datetime.fromisoformat(iso)
        cands = rank(store.entries.values(), now, Thresholds())
        lines.append(f"core candidates at {iso[:10]}: {len(cands)}")
        lines += [
            f"  {c.score:.3f}  {c.path}:{c.start_line}-{c.end_line}  recalls={c.recall_count} "
            f"queries={c.unique_queries} avg={c.avg_score:.3f}"
            for c in cands
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--check", action="store_true", help="only verify the committed store is current"
    )
    ap.add_argument("--workspace", type=Path, default=WORKSPACE)
    args = ap.parse_args(argv)
    ws = Workspace(args.workspace.resolve())
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / "store.json"
            build(ws.root, fresh)
            same = ws.store_path.exists() and fresh.read_bytes() == ws.store_path.read_bytes()
        print("store is up to date" if same else "store differs: rerun without --check")
        print("\n".join(summary(ws)))
        return 0 if same else 1
    stats = build(ws.root, ws.store_path)
    print(
        f"replayed {stats['searches']} searches, {stats['hits']} eligible hits -> {ws.store_path}"
    )
    print("\n".join(summary(ws)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
