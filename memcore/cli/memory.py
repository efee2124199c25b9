"""``memcore init``, ``memcore memory promote|explain|status`` and ``memcore dreaming``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, handle_errors, json_option


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@handle_errors
def init_cmd(directory: str | None) -> None:
    """Create MEMORY.md, memory/ and a commented memcore.toml (never overwrites)."""
    from memcore.promotion.promote import TITLE
    from memcore.workspace.config import DEFAULT_CONFIG_TEXT
    from memcore.workspace.core import Workspace, atomic_write_text, resolve_workspace

    ws = Workspace(Path(directory).absolute()) if directory else resolve_workspace(must_exist=False)
    if ws.root.exists() and not ws.root.is_dir():
        raise click.ClickException(f"{ws.root} exists and is not a directory")
    ws.root.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    kept: list[str] = []
    if ws.memory_dir.exists():
        kept.append("memory/")
    else:
        ws.memory_dir.mkdir()
        made.append("memory/")
    for path, text in ((ws.memory_md, TITLE + "\n"), (ws.config_path, DEFAULT_CONFIG_TEXT)):
        if path.exists() or path.is_symlink():
            kept.append(path.name)
        else:
            atomic_write_text(path, text)
            made.append(path.name)
    click.echo(f"Workspace: {ws.root}")
    if made:
        click.echo("Created: " + ", ".join(made))
    if kept:
        click.echo("Kept (already there): " + ", ".join(kept))


@click.group("memory")
def memory_group() -> None:
    """Search memory, record recalls and promote them into MEMORY.md."""


def _threshold_options(fn: Any) -> Any:
    fn = click.option(
        "--min-unique-queries",
        type=click.IntRange(min=0, max=32),
        help="Gate: distinct queries (default: config, else the mode's preset: 2).",
    )(fn)
    fn = click.option(
        "--min-recall-count",
        type=click.IntRange(min=0),
        help="Gate: recalls (default: config, else the mode's preset: 3).",
    )(fn)
    fn = click.option(
        "--min-score",
        type=click.FloatRange(0, 1),
        help="Gate: weighted score 0-1 (default: config, else the mode's preset: 0.75).",
    )(fn)
    return fn


@memory_group.command("promote")
@click.option("--apply", "do_apply", is_flag=True, help="Append the candidates to MEMORY.md.")
@click.option("--limit", type=click.IntRange(min=0), help="Most candidates (default: config, 10).")
@click.option("--include-promoted", is_flag=True, help="Also list already promoted (preview only).")
@_threshold_options
@json_option
@handle_errors
def promote_cmd(
    do_apply: bool,
    limit: int | None,
    include_promoted: bool,
    min_score: float | None,
    min_recall_count: int | None,
    min_unique_queries: int | None,
    as_json: bool,
) -> None:
    """Rank short-term recalls; with --apply, append the best to MEMORY.md."""
    from memcore.promotion import promote

    ws = current_workspace()
    kwargs: dict[str, Any] = dict(
        limit=limit,
        min_score=min_score,
        min_recall_count=min_recall_count,
        min_unique_queries=min_unique_queries,
    )
    if do_apply:
        if include_promoted:
            raise click.UsageError("--include-promoted is preview-only; drop it to apply")
        result = promote.apply(ws, **kwargs)
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


def _print_promote(ws: Any, result: Any) -> None:
    if not result.candidates:
        click.echo("No short-term recall candidates.")
        click.echo(f"Recall store: {ws.store_path}")
        ex = result.exclusions
        if ex.get("excluded"):
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(ex["byReason"].items()))
            total = ex["considered"] + ex["byReason"].get("promoted", 0)
            click.echo(f"Excluded {ex['excluded']} of {total}: {reasons}")
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
            f"minUniqueQueries={th.min_unique_queries} limit={result.limit}"
        )
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
    elif result.candidates:
        click.echo("Preview only: nothing written. Apply with: memcore memory promote --apply")


@memory_group.command("explain")
@click.argument("selector")
@json_option
@handle_errors
def explain_cmd(selector: str, as_json: bool) -> None:
    """Why an entry is or is not a candidate: components, score, every gate."""
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


@memory_group.command("status")
@click.option("--deep", is_flag=True, help="Also check the index freshness file by file.")
@click.option("--fix", is_flag=True, help="Normalise the recall store (rewrites only on change).")
@json_option
@handle_errors
def status_cmd(deep: bool, fix: bool, as_json: bool) -> None:
    """Workspace, index, recall store, lock, dreaming settings and warnings."""
    from memcore.promotion import status
    from memcore.recall import repair as recall_repair

    ws = current_workspace()
    repair = None
    if fix:
        repair = recall_repair.repair_store(ws)
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
        }
    if as_json:
        echo_json(st)
        return
    h = st["storeHealth"]
    click.echo(f"Workspace: {ws.root}")
    idx = st["index"]
    if idx.get("error"):
        click.echo(f"Index: unavailable ({idx['error']})")
    elif idx and not idx.get("files"):
        n = idx.get("stale", 0)
        click.echo(f"Index: not built yet ({n} file{'' if n == 1 else 's'}; a search builds it)")
    elif idx:
        fresh = "fresh" if idx.get("fresh") else f"{idx.get('stale', 0)} stale"
        click.echo(f"Index: {idx.get('files', 0)} files · {idx.get('chunks', 0)} chunks · {fresh}")
        for skipped in idx.get("skipped") or []:
            click.echo(f"Index skipped: {skipped}")
    click.echo(
        f"Recall store: {h['entries']} entries · {st['promotedTotal']} promoted · "
        f"{st['shortTermCount']} short-term · {h['invalid']} invalid · {h['sizeBytes']} bytes"
    )
    click.echo(f"Recall path: {ws.store_path}")
    if h.get("updatedAt"):
        click.echo(f"Recall updated: {h['updatedAt']}")
    size = st.get("memorySize") or {}
    click.echo(
        f"Long-term entries: {st['longTermCount']} · {size.get('chars', 0)} of "
        f"{size.get('budgetChars', 0)} characters ([memory] budget_chars)"
    )
    click.echo(f"Lock: {st['lock']} ({ws.lock_path})")
    cadence = f"{st['cron']} ({st['timezone']})" if st["enabled"] else "disabled"
    click.echo(
        f"Dreaming: {st['mode']} · {cadence} · limit={st['limit']} · minScore={st['minScore']:g} · "
        f"minRecallCount={st['minRecallCount']} · minUniqueQueries={st['minUniqueQueries']} · "
        f"recencyHalfLifeDays={st['recencyHalfLifeDays']:g}"
    )
    if repair is not None:
        if repair.changed:
            click.echo(f"Repair: rewrote store (-{repair.dropped_invalid} invalid)")
        else:
            click.echo("Repair: no changes")
    if st["warnings"]:
        click.echo("Issues:")
        for w in st["warnings"]:
            click.echo(f"  - {w}")
        if h.get("invalid") and not fix:
            click.echo("Fix: memcore memory status --fix")


def _index_stats(ws: Any, deep: bool) -> dict[str, Any]:
    from memcore.search import query as search

    try:
        return search.index_stats(ws, deep=deep)
    except Exception as exc:  # the index is a cache: report, never fail status
        return {"error": str(exc)}


@click.command("dreaming")
@click.argument("words", nargs=-1)
@handle_errors
def dreaming_cmd(words: tuple[str, ...]) -> None:
    """The /dreaming chat command: off|core|rem|deep|status|help."""
    from memcore.promotion.commands import handle_dreaming

    click.echo(handle_dreaming(current_workspace(), " ".join(words)))


def register(root: click.Group) -> None:
    """Add init, memory and dreaming to the root group."""
    root.add_command(init_cmd)
    root.add_command(memory_group)
    root.add_command(dreaming_cmd)
