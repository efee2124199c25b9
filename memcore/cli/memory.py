"""``memcore memory``: search, record, promote, explain, status, set and backfill.

Library modules (and numpy) are imported inside the commands so ``memcore --help`` stays fast.
"""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import (
    FOLD_TIMEOUT_HELP,
    FloatRange,
    IntRange,
    current_workspace,
    echo_json,
    json_option,
    lock_timeout_option,
    lock_timeout_value,
    not_empty,
    progress_bar,
    threshold_options,
)
from memcore.cli.fast import ORIGINS  # memcore.recall.entries.ORIGINS

ENTRY_TYPES = (
    "decision",
    "convention",
    "preference",
    "fact",
    "session_state",
    "compact_summary",
    "task_learning",
    "unknown",
)
SCOPES = ("global", "project", "session")
ORIGIN_HELP = (
    "What issued the search: interactive (a search made to answer someone: the default), "
    "agent (one the agent ran on its own, e.g. automatic recall), schedule, backfill. Only "
    "interactive searches count toward the distinct-queries gate."
)


@click.group("memory")
def memory_group() -> None:
    """Search memory, record recalls and promote them into MEMORY.md.

    \b
    Examples:
      memcore memory search "staging database"
      memcore memory promote --apply
      memcore memory status
    """


# -- search and record --------------------------------------------------------------------


@memory_group.command("search")
@click.argument("query", callback=not_empty)
@click.option(
    "--limit",
    "-n",
    type=IntRange(1, 1000),
    default=10,
    show_default=True,
    help="Most hits to return.",
)
@click.option("--no-record", is_flag=True, help="Do not record the hits in the recall store.")
@lock_timeout_option(default=3.0, help=FOLD_TIMEOUT_HELP)
@json_option
def search_cmd(query: str, limit: int, no_record: bool, lock_timeout: float, as_json: bool) -> None:
    """Search MEMORY.md and memory/*.md, and record daily-note hits as recalls.

    Scores are in [0, 1]: about 0.85 or more when a query clearly targets one chunk. Hits
    are recorded even while another run holds the workspace lock (they wait in the recall log).
    In a Claude Code memory folder the topic files (front matter included) and CLAUDE.md
    files are searched too; Codex's memory_summary.md and Hermes' USER.md likewise.

    \b
    Examples:
      memcore memory search "staging database"
      memcore memory search deploy -n 3 --no-record
      memcore memory search "who owns payouts" --json
    """
    import logging

    from memcore.search.query import search

    ws = current_workspace()
    # The library logs a recording failure; here it is shown once, below, as a warning line.
    logging.getLogger("memcore.search.query").setLevel(logging.ERROR)
    with progress_bar() as progress:
        result = search(
            ws,
            query,
            limit=limit,
            record=not no_record,
            lock_timeout=lock_timeout,
            progress=progress,
        )
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if result.record_error:
        click.echo(f"Warning: {result.record_error} (the search itself succeeded)", err=True)
    if as_json:
        echo_json(result.to_json())
        return
    if not result.results:
        click.echo("No matches.")
        return
    for hit in result.results:
        click.echo(f"{hit['path']}:{hit['startLine']}-{hit['endLine']}  score={hit['score']:.3f}")
        for line in hit["snippet"].splitlines():
            click.echo(f"    {line}")


@memory_group.command("record")
@click.option(
    "--query",
    "-q",
    required=True,
    callback=not_empty,
    help="The query the hits were found for.",
)
@click.option(
    "--origin",
    type=click.Choice(ORIGINS),
    default="interactive",
    show_default=True,
    help=ORIGIN_HELP,
)
@lock_timeout_option(default=0.0, legacy="--timeout", help=FOLD_TIMEOUT_HELP)
@json_option
def record_cmd(query: str, origin: str, lock_timeout: float, as_json: bool) -> None:
    """Record search hits read as JSON on stdin (a list of results, or {"results": [...]}).

    This is how an agent with its own memory search feeds memcore's recall tracking. Only hits
    on daily notes inside the workspace are recorded (memory/YYYY-MM-DD.md, split days
    memory/YYYY-MM-DD-HHMM.md, sub-folders memory/<sub>/YYYY-MM-DD.md); a path outside it is
    refused.

    \b
    Examples:
      my-search "staging db" | memcore memory record -q "staging db"
      memcore memory record -q deploy --json < hits.json
    """
    from memcore.cli.fast import record_stdin

    record_stdin(
        current_workspace(),
        query,
        origin,
        lock_timeout_value(lock_timeout),
        as_json,
        echo=click.echo,
        echo_err=lambda text: click.echo(text, err=True),
    )


# -- promote and explain ------------------------------------------------------------------


@memory_group.command("promote")
@click.option("--apply", "do_apply", is_flag=True, help="Append the candidates to MEMORY.md.")
@click.option(
    "--limit",
    type=IntRange(min=0),
    help="Most candidates (default: every one in a preview; the mode's limit with --apply).",
)
@click.option("--include-promoted", is_flag=True, help="Also list already promoted (preview only).")
@threshold_options
@lock_timeout_option()
@json_option
def promote_cmd(
    do_apply: bool,
    limit: int | None,
    include_promoted: bool,
    min_score: float | None,
    min_recall_count: int | None,
    min_unique_queries: int | None,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Rank short-term recalls; with --apply, append the best to MEMORY.md.

    \b
    Examples:
      memcore memory promote                  # preview: nothing is written
      memcore memory promote --min-score 0.6 --limit 3
      memcore memory promote --apply --json
    """
    from memcore.promotion import promote

    if do_apply and include_promoted:
        raise click.UsageError("--include-promoted is preview-only; drop it to apply")
    ws = current_workspace()
    kwargs: dict[str, Any] = dict(
        limit=limit,
        min_score=min_score,
        min_recall_count=min_recall_count,
        min_unique_queries=min_unique_queries,
    )
    if do_apply:
        result = promote.apply(ws, lock_timeout=lock_timeout, **kwargs)
    else:
        result = promote.preview(ws, include_promoted=include_promoted, **kwargs)
    if result.quarantined:
        click.echo(
            f"Warning: the recall store did not parse; moved aside to {result.quarantined}",
            err=True,
        )
    if as_json:
        echo_json(result.to_json())
        return
    _print_promote(ws, result)


#: How the preview names each reason an entry is not a candidate.
REASON_NAMES = {
    "promoted": "already promoted",
    "notDailyNote": "not on a daily note",
    "recallCount": "too few recalls",
    "uniqueQueries": "too few distinct queries",
    "relevance": "mean relevance below minRelevance",
    "score": "score below minScore",
}


def totals_line(result: Any) -> str | None:
    """``Entries: 13 = 10 qualifying + 2 already promoted + 1 not on a daily note``: every
    store entry under a named reason, so the totals have no silent gap."""
    ex = result.exclusions
    if not ex:
        return None
    by = ex.get("byReason") or {}
    qualifying = ex["considered"] - ex["excluded"]
    total = ex["considered"] + by.get("promoted", 0)
    parts = [f"{qualifying} qualifying"]
    for k in ("promoted", "notDailyNote", "recallCount", "uniqueQueries", "relevance", "score"):
        if by.get(k):
            parts.append(f"{by[k]} {REASON_NAMES[k]}")
    for k, v in sorted(by.items()):
        if k not in REASON_NAMES and v:
            parts.append(f"{v} {k}")
    shown = len(result.candidates)
    more = f" (showing {shown}: --limit)" if shown < qualifying else ""
    return f"Entries: {total} = " + " + ".join(parts) + more


def _print_promote(ws: Any, result: Any) -> None:
    if not result.candidates:
        click.echo("No short-term recall candidates.")
        click.echo(f"Recall store: {ws.store_path}")
        for why in nearest_lines(result.nearest):
            click.echo(why)
        ex = result.exclusions
        if ex.get("excluded"):
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(ex["byReason"].items()))
            total = ex["considered"] + ex["byReason"].get("promoted", 0)
            click.echo(f"Excluded {ex['excluded']} of {total}: {reasons}")
        if ex.get("excluded"):
            click.echo("See why: memcore memory explain <path or text>")
    else:
        th = result.thresholds
        click.echo(f"Short-Term Promotion Candidates ({ws.root.name})")
        click.echo(f"Recall store: {ws.store_path}")
        click.echo(
            f"Store health: {result.store_entries} entries · {result.store_promoted} promoted"
        )
        click.echo(
            f"Gates: minScore={th.min_score:g} minRecallCount={th.min_recall_count} "
            f"minUniqueQueries={th.min_unique_queries} minRelevance={th.min_relevance:g} "
            f"limit={result.limit}"
        )
        line = totals_line(result)
        if line:
            click.echo(line)
        click.echo("")
        for c in result.candidates:
            click.echo(f"{c.score:.3f} {c.path}:{c.start_line}-{c.end_line}")
            click.echo(
                f"  recalls={c.recall_count} avg={c.avg_score:.3f} queries={c.unique_queries} "
                f"age={c.age_days:.1f}d"
            )
            click.echo(f"  {c.snippet}")
            click.echo("")
    if result.apply is not None:
        a = result.apply
        if a["applied"] or a["skipped"]:
            click.echo(f"Processed {len(result.candidates)} candidate(s) for {a['memoryPath']}.")
            click.echo(f"appended={a['appended']} reconciledExisting={a['reconciledExisting']}")
            for s in a["skipped"]:
                click.echo(f"skipped {s['key']}: {s['reason']}")
        else:
            click.echo("No candidates met apply criteria.")
        for h in a.get("heldBack", []):
            click.echo(f"held back {h['key']}: {h['reason']}")
        if a.get("runId"):
            click.echo(f"Run {a['runId']} (memcore undo {a['runId']} takes it back).")
    elif result.candidates:
        click.echo("Preview only: nothing written. Apply with: memcore memory promote --apply")


@memory_group.command("explain")
@click.argument("selector", callback=not_empty)
@json_option
def explain_cmd(selector: str, as_json: bool) -> None:
    """Why an entry is or is not a candidate: components, score, every gate.

    SELECTOR is a recall key, or part of one, of its path or of its snippet. When it matches
    several entries and none exactly, they are listed and the command exits 1.

    \b
    Examples:
      memcore memory explain 2026-11-06.md:16
      memcore memory explain "staging database" --json
    """
    from memcore.promotion import promote

    ws = current_workspace()
    out = promote.explain(ws, selector)
    if as_json:
        echo_json(out)
        return
    c = out["candidate"]
    click.echo(f"Promotion Explain ({ws.root.name})")
    click.echo(c["key"])
    click.echo(f"{c['path']}:{c['startLine']}-{c['endLine']}")
    click.echo(c["snippet"])
    click.echo(
        f"score={c['score']:.3f} recallCount={c['recallCount']} "
        f"uniqueQueries={c['uniqueQueries']} ageDays={c['ageDays']:.1f}"
        + (f" promotedAt={c['promotedAt']}" if c.get("promotedAt") else "")
    )
    comps = " ".join(f"{k}={v:.3f}" for k, v in c["components"].items())
    click.echo(f"components: {comps}")
    for g in out["gates"]:
        verdict = "pass" if g["passed"] else "FAIL"
        click.echo(
            f"  {verdict} {g['gate']}: {g['actual']:g} vs required {g['required']:g} "
            f"(margin {g['margin']:+.3f})"
        )
    click.echo("Verdict: " + ("qualifies" if out["passes"] else "does not qualify"))


# -- status -------------------------------------------------------------------------------


@memory_group.command("status")
@click.option("--deep", is_flag=True, help="Also check the index freshness file by file.")
@click.option(
    "--fix",
    is_flag=True,
    help="Repair the recall store: normalise, drop invalid entries, redact secrets, restore "
    "entries the cap set aside (rewrites only on change).",
)
@lock_timeout_option()
@json_option
def status_cmd(deep: bool, fix: bool, lock_timeout: float, as_json: bool) -> None:
    """Workspace, index, recall store, lock, dreaming settings and warnings.

    \b
    Examples:
      memcore memory status
      memcore memory status --deep --json
      memcore memory status --fix          # repair the recall store
    """
    from memcore.promotion import status
    from memcore.recall import repair as recall_repair

    ws = current_workspace()
    repair = recall_repair.repair_store(ws, lock_timeout=lock_timeout) if fix else None
    st = status.dreaming_status(ws)
    st["lock"] = status.lock_state(ws)
    st["index"] = _index_stats(ws, deep)
    st["recordError"] = status.last_record_error(ws)
    st["warnings"] = status.warnings_for(ws, st)
    if repair is not None:
        st["repair"] = {
            "changed": repair.changed,
            "droppedInvalid": repair.dropped_invalid,
            "entries": repair.entries,
            "quarantined": str(repair.quarantined) if repair.quarantined else None,
            "droppedBecause": repair.reasons,
            "redacted": repair.redacted,
            "restoredEvicted": repair.restored.restored if repair.restored else 0,
            "restoredFiles": len(repair.restored.files) if repair.restored else 0,
            "maxEntriesRaisedTo": repair.restored.cap_raised_to if repair.restored else None,
        }
    if as_json:
        echo_json(st)
        return
    click.echo("\n".join(_status_lines(ws, st, fix)))


def _index_stats(ws: Any, deep: bool) -> dict[str, Any]:
    from memcore.search import query as search

    try:
        return search.index_stats(ws, deep=deep)
    except Exception as exc:  # the index is a cache: report, never fail status
        return {"error": str(exc)}


def nearest_lines(nearest: list[dict[str, Any]]) -> list[str]:
    """The "why not yet" lines of the entries closest to the gates."""
    if not nearest:
        return []
    lines = ["Not yet promoted (nearest to the gates):"]
    for c in nearest:
        lines.append(f"  {c['path']}:{c['startLine']}-{c['endLine']}  {c['whyNot']['summary']}")
        snippet = c["snippet"] if len(c["snippet"]) <= 90 else c["snippet"][:89] + "…"
        lines.append(f"    {snippet}")
    return lines


def _status_lines(ws: Any, st: dict[str, Any], fix: bool) -> list[str]:
    h = st["storeHealth"]
    lines = [f"Workspace: {ws.root}"]
    idx = st["index"]
    if idx.get("error"):
        lines.append(f"Index: unavailable ({idx['error']})")
    elif idx and not idx.get("files"):
        n = idx.get("stale", 0)
        lines.append(f"Index: not built yet ({n} file{'' if n == 1 else 's'}; a search builds it)")
    elif idx:
        fresh = "fresh" if idx.get("fresh") else f"{idx.get('stale', 0)} stale"
        lines.append(
            f"Index: {idx.get('files', 0)} files · {idx.get('chunks', 0)} chunks · {fresh}"
        )
    for skipped in idx.get("skipped") or []:
        lines.append(f"Index skipped: {skipped['path']}: {skipped['reason']}")
    lines.append(
        f"Recall store: {h['entries']} entries · {st['promotedTotal']} promoted · "
        f"{st['shortTermCount']} short-term · {st.get('notDailyNoteCount', 0)} not on a daily "
        f"note · {h['invalid']} invalid · {h['sizeBytes']} bytes"
    )
    lines.append(f"Recall path: {ws.store_path}")
    if h.get("updatedAt"):
        lines.append(f"Recall updated: {h['updatedAt']}")
    size = st.get("memorySize") or {}
    lines.append(
        f"Long-term entries: {st['longTermCount']} · {size.get('chars', 0)} of "
        f"{size.get('budgetChars', 0)} characters ([memory] budget_chars)"
    )
    lines.append(f"Lock: {st['lock']} ({ws.lock_path})")
    cadence = f"{st['cron']} ({st['timezone']})" if st["enabled"] else "disabled"
    lines.append(
        f"Dreaming: {st['mode']} · {cadence} · limit={st['limit']} · minScore={st['minScore']:g} · "
        f"minRecallCount={st['minRecallCount']} · minUniqueQueries={st['minUniqueQueries']} · "
        f"recencyHalfLifeDays={st['recencyHalfLifeDays']:g}"
    )
    lines.extend(nearest_lines(st.get("nearest") or []))
    repair = st.get("repair")
    if repair is not None:
        if repair["changed"]:
            why = ", ".join(f"{n} {r}" for r, n in sorted(repair["droppedBecause"].items()))
            redacted = repair["redacted"]
            lines.append(
                f"Repair: rewrote store (-{repair['droppedInvalid']} invalid"
                + (f": {why}" if why else "")
                + (f"; {redacted} snippets redacted" if redacted else "")
                + ")"
            )
        else:
            lines.append("Repair: no changes")
        if repair["restoredEvicted"]:
            lines.append(
                f"Restored {repair['restoredEvicted']} evicted entries from "
                f"{repair['restoredFiles']} file(s)."
            )
        if repair["maxEntriesRaisedTo"]:
            lines.append(
                f"Raised [dreaming] max_entries to {repair['maxEntriesRaisedTo']} in memcore.toml "
                "so they stay."
            )
    if st["warnings"]:
        lines.append("Issues:")
        lines.extend(f"  - {w}" for w in st["warnings"])
        if h.get("invalid") and not fix:
            lines.append("Fix: memcore memory status --fix")
    return lines


# -- set ----------------------------------------------------------------------------------


@memory_group.command("set")
@click.argument("entry_id", callback=not_empty)
@click.option("--importance", type=FloatRange(0, 1), help="Importance 0-1.")
@click.option(
    "--pin/--unpin",
    "pinned",
    default=None,
    help="Pinned entries are never merged away or forgotten.",
)
@click.option(
    "--type", "type_", type=click.Choice(ENTRY_TYPES, case_sensitive=False), help="Entry type."
)
@click.option("--scope", type=click.Choice(SCOPES, case_sensitive=False), help="Entry scope.")
@lock_timeout_option()
@json_option
def set_cmd(
    entry_id: str,
    importance: float | None,
    pinned: bool | None,
    type_: str | None,
    scope: str | None,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Set an entry's importance, pin, type or scope (pin/type/scope go into its marker).

    ENTRY_ID is the id `memcore dream entries` lists.

    \b
    Examples:
      memcore memory set 00895b947a70 --pin
      memcore memory set 00895b947a70 --importance 0.9 --type decision
    """
    from memcore.dream.setmeta import set_entry
    from memcore.workspace.clock import utcnow

    if importance is None and pinned is None and type_ is None and scope is None:
        raise click.UsageError(
            "nothing to set: give --importance, --pin/--unpin, --type or --scope"
        )
    res = set_entry(
        current_workspace(),
        entry_id,
        now=utcnow(),
        importance=importance,
        pinned=pinned,
        type=type_.lower() if type_ else None,
        scope=scope.lower() if scope else None,
        lock_timeout=lock_timeout,
    )
    if as_json:
        echo_json(res)
        return
    click.echo(
        f"{res['id']}: importance={res['importance']:.2f} type={res['type']} scope={res['scope']} "
        f"pinned={'yes' if res['pinned'] else 'no'}"
    )


@memory_group.command("backfill")
@click.option(
    "--days",
    type=IntRange(1, 3650),
    default=30,
    show_default=True,
    help="Read the daily notes of the last N days.",
)
@click.option("--apply", "do_apply", is_flag=True, help="Seed the recall store (one undoable run).")
@click.option(
    "--rollback",
    is_flag=True,
    help="Remove exactly what the last backfill added, and nothing else.",
)
@lock_timeout_option()
@json_option
def backfill_cmd(
    days: int, do_apply: bool, rollback: bool, lock_timeout: float, as_json: bool
) -> None:
    """A warm start: seed the recall store with facts the daily notes repeat.

    A fact written on several days (and decisions and rules stated as such) gets recalls of
    origin backfill: they count as recalls, never toward the distinct-queries gate, so real
    searches still confirm each entry before it is promoted. Without --apply, a preview:
    nothing is written. Files that cannot be read are skipped and named.

    \b
    Examples:
      memcore memory backfill                 # preview
      memcore memory backfill --days 14 --apply
      memcore memory backfill --rollback
    """
    from memcore.cli.backfill import run_backfill

    run_backfill(days, do_apply, rollback, lock_timeout, as_json)
