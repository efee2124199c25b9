"""A session-dream run: finished sessions into session, project and global short memories.

Order: take the lease, scan the sessions folder, review the newest candidates (at most 20)
in batches, read raw transcript of idle sessions, fold changed session memories into the
project memory and changed project memories into the global one, export markdown, record
the report. Every publication (version + sources + progress marker) is one transaction that
first checks the lease and that the sources did not change under the run.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memcore.errors import (
    BudgetExhausted,
    InputError,
    LeaseLost,
    LLMError,
    LockBusy,
    MemcoreError,
    RunStopped,
    SourceChanged,
)
from memcore.judge.llm import LLM, make_llm
from memcore.sessions import catalog, sharing, units
from memcore.sessions.calls import Caller
from memcore.sessions.control import (
    RUNS_KEPT_DAYS,
    StopEvent,
    checker,
    ensure_control_columns,
)
from memcore.sessions.flow import flow_up, latest_projects, mirror_project
from memcore.sessions.lease import DEFAULT_TTL, GLOBAL_LEASE_NAME, Lease
from memcore.sessions.reading import backfill_decisions, review_safely
from memcore.sessions.settings import SessionsSettings, project_id, sessions_settings
from memcore.sessions.store import (
    ensure_schema,
    latest,
    set_state,
    transaction,
)
from memcore.sessions.transcripts import Transcript
from memcore.sessions.userdb import migrate_ledger, open_user_db
from memcore.workspace.clock import iso_ms
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from memcore.workspace.progress import Progress
from memcore.workspace.progress import report as report_progress

MAX_SESSIONS_PER_RUN = 20
SESSIONS_LABEL = "Reading sessions"
BACKLOG_LABEL = "Reading older sessions"
RUNS_KEPT = timedelta(days=RUNS_KEPT_DAYS)  # run reports older than this are pruned
CHUNK_BYTES = units.CHUNK_BYTES  # one source of a call, in UTF-8 bytes


@dataclass
class Run:
    ws: Workspace
    conn: sqlite3.Connection
    settings: SessionsSettings
    caller: Caller
    lease: Lease
    now: datetime
    user: sqlite3.Connection | None = None  # the user database: ledger, global memory
    global_wait: float = 600.0  # seconds the global step waits for another workspace's
    cache: dict[str, Transcript] = field(default_factory=dict)
    read: list[dict[str, Any]] = field(default_factory=list)
    wrote: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    unsorted: list[dict[str, str]] = field(default_factory=list)  # no cwd: no project's
    reviewed: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)  # steps left to the next run, with why
    rebuilt: list[dict[str, Any]] = field(default_factory=list)  # made again without leavers
    decided: list[str] = field(default_factory=list)  # decision records this run added
    exported: dict[str, Any] | None = None  # files of memory/summaries/ and their journal run
    trigger: str = "manual"
    scope: dict[str, str] = field(default_factory=dict)  # {} | {"session": id} | {"project": id}
    progress: Progress | None = None

    @property
    def now_iso(self) -> str:
        return iso_ms(self.now)


def execute(
    ws: Workspace,
    *,
    now: datetime,
    trigger: str = "manual",
    llm: LLM | None = None,
    clock: Callable[[], datetime] | None = None,
    health: dict[str, Any] | None = None,
    progress: Progress | None = None,
    stop: StopEvent | None = None,
    session: str | None = None,
    project: str | None = None,
    settings: SessionsSettings | None = None,
) -> dict[str, Any]:
    """Run a session dream now (the caller checked the gates). Raises LockBusy when another run
    holds the lease; otherwise returns the report, also for failed and stopped runs.
    ``progress`` is called as ``progress(label, done, total)`` around each session read;
    ``stop`` (set by a signal handler or another thread) stops the run at its next
    checkpoint, see ``memcore.sessions.control``. ``session`` limits the run to that one
    session's short memory (an independent session can be dreamed alone); ``project`` (this
    workspace's project id) to its sessions and project memory, without the global step."""
    import json

    if project is not None and project != project_id(ws):
        raise InputError(
            f"--project {project!r} is not this workspace's project; allowed: {project_id(ws)}"
            " (run it in the workspace of that project)"
        )

    cfg = load_config(ws)
    settings = settings or sessions_settings(cfg)  # given: the last good ones (see jobs)
    if session is not None:
        found = catalog.match_session(catalog.session_files(settings.sessions_dir(ws)), session)
        if found is None:
            raise InputError(
                f"--session {session!r}: no such session in {settings.sessions_dir(ws)};"
                " see `memcore recall sessions`"
            )
        session = found
    model = llm or make_llm(cfg, settings.model)
    clock = clock or (lambda: now)
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    timeout = float(getattr(model, "timeout", 0) or 0)
    lease = Lease(conn, ttl=max(DEFAULT_TTL, timedelta(seconds=3 * timeout)))
    lease.acquire(now)
    run_id = uuid.uuid4().hex[:12]
    with transaction(conn):
        conn.execute(
            "UPDATE sess_runs SET status='failed', finished_at=?,"
            " error='interrupted: left running by"
            " a process that stopped' WHERE status='running'",
            (iso_ms(now),),
        )
        ensure_control_columns(conn)
        scope = {"session": session} if session else {"project": project} if project else {}
        conn.execute(
            "INSERT INTO sess_runs (id, started_at, status, trigger, holder, scope)"
            " VALUES (?,?, 'running', ?, ?, ?)",
            (run_id, iso_ms(now), trigger, lease.holder, json.dumps(scope)),
        )
    user = open_user_db()
    migrate_ledger(conn, user, str(ws.root))
    _keep_version_numbers(ws, conn, user)
    _reread_lost_memories(conn)
    caller = Caller(
        user,
        model,
        lease,
        clock,
        settings.daily_token_budget,
        run_id,
        workspace=str(ws.root),
        should_stop=checker(conn, run_id, ws.root, stop),
        stop_event=stop,
    )
    run = Run(
        ws,
        conn,
        settings,
        caller,
        lease,
        now,
        user=user,
        global_wait=max(600.0, 4 * timeout),
        trigger=trigger,
        progress=progress,
        scope=scope,
    )
    status, error = "ok", None
    lost = False
    report: dict[str, Any] = {}
    try:
        status, error = _steps(run, health)
        status, error = _all_rejected(caller) or (status, error)
    except BudgetExhausted as exc:
        status, error = "budget", str(exc)
    except RunStopped as exc:
        status, error = "stopped", str(exc)
    except LeaseLost as exc:
        status, error, lost = "failed", str(exc), True
    except (LLMError, SourceChanged, MemcoreError) as exc:
        status, error = "failed", str(exc)
    except BaseException as exc:
        status, error = "failed", f"interrupted: {type(exc).__name__}: {exc}"
        _finish(run, run_id, status, error, report, lost=False)
        lease.release()
        user.close()
        raise
    _finish(run, run_id, status, error, report, lost=lost)
    if not lost:
        lease.release()
    conn.close()
    user.close()
    plain: dict[str, Any] = json.loads(json.dumps(report))  # JSON types only, no shared lists
    return plain


def _keep_version_numbers(
    ws: Workspace, conn: sqlite3.Connection, user: sqlite3.Connection
) -> None:
    """Versions named by the exports (and project versions mirrored in the user database)
    stay taken: after a corrupt database lost some, new versions are numbered past them."""
    from memcore.sessions.export import exported_refs
    from memcore.sessions.store import get_version, parse_memory_ref, raise_version_floor

    pid = project_id(ws)
    mirrored = user.execute(
        "SELECT coalesce(max(version), 0) FROM sess_memories WHERE level='project' AND owner=?",
        (pid,),
    ).fetchone()[0]
    refs = [(lv, ow, n) for lv, ow, n in map(parse_memory_ref, exported_refs(ws))]
    if mirrored:
        refs.append(("project", pid, int(mirrored)))
    for level, owner, n in refs:
        target = user if level == "global" else conn
        if get_version(target, level, owner, n) is None:
            with transaction(target):
                raise_version_floor(target, level, owner, n)


def _reread_lost_memories(conn: sqlite3.Connection) -> None:
    """After a corrupt database lost short memories but kept the review progress, the sessions
    without a memory are unread again (once per such loss): nothing in them looks new, so
    they would otherwise stay without one for good. Sessions whose memory came across are not
    read again. The sources left of lost versions go (a new version would reuse their ids
    and fail)."""
    from memcore.sessions.store import get_state, set_state
    from memcore.workspace.db import quarantines

    for q in quarantines(conn):
        if "sess_memories" not in q["lost"] and "*" not in q["lost"]:
            continue
        key = f"reread_after_quarantine:{q['at']}:{q['aside']}"
        if get_state(conn, key):
            continue
        with transaction(conn):
            conn.execute(  # sources of lost versions: a new version would reuse their ids
                "DELETE FROM sess_memory_sources WHERE memory_id NOT IN"
                " (SELECT id FROM sess_memories)"
            )
            kept = "SELECT owner FROM sess_memories WHERE level='session'"
            conn.execute(f"DELETE FROM sess_seen WHERE session_id NOT IN ({kept})")
            conn.execute(f"DELETE FROM sess_progress WHERE session_id NOT IN ({kept})")
            set_state(conn, key, "done")


def _all_rejected(caller: Caller) -> tuple[str, str] | None:
    """A run in which the model answered but no answer passed validation failed: nothing was
    learnt, so it must back off briefly and try again, not wait for the next interval."""
    if caller.accepted or not caller.rejected:
        return None
    n = len(caller.rejected)
    first = " ".join(caller.rejected[0].split())
    return "failed", f"every model answer was rejected ({n} of {n}); the first: {first}"


def _steps(run: Run, health: dict[str, Any] | None) -> tuple[str, str | None]:
    sessions = catalog.scan(run.ws, run.conn, run.settings, run.cache, unsorted=run.unsorted)
    for s in sessions:
        if s.status in ("unreadable", "unsupported"):
            run.skipped.append({"session": s.id, "reason": f"{s.status}: {s.error}"})
    only = run.scope.get("session")
    scoped = [s for s in sessions if s.id == only] if only is not None else sessions
    if only is None:  # messages read before decisions were kept: their decisions, once
        backfill_decisions(run, sessions)
    cands = catalog.candidates(run.conn, scoped)[:MAX_SESSIONS_PER_RUN]
    stop = run.caller.should_stop or (lambda: None)
    for done, info in enumerate(cands):
        stop()
        _progress(run, SESSIONS_LABEL, done, len(cands))
        if review_safely(run, info, raw=False):
            run.reviewed.append(info.id)
    _progress(run, SESSIONS_LABEL, len(cands), len(cands))
    backlog = catalog.raw_backlog(run.conn, scoped, run.settings, run.now)
    backlog = backlog[:MAX_SESSIONS_PER_RUN]
    for done, info in enumerate(backlog):
        stop()
        _progress(run, BACKLOG_LABEL, done, len(backlog))
        review_safely(run, info, raw=True)
    _progress(run, BACKLOG_LABEL, len(backlog), len(backlog))
    if only is not None:  # one session's short memory; the levels above wait for a full run
        run.deferred.append("project and global: not in this run's scope (--session)")
        return _export(run)
    pid = project_id(run.ws)
    children = [
        v
        for s in sessions
        if s.shared and not s.generated and s.status == "ok"
        for v in [latest(run.conn, "session", s.id)]
        if v is not None
    ]
    gone = sharing.leavers(run.conn, pid)
    assert run.user is not None
    if gone:  # the project memory carries sessions that left: made again without them
        sharing.mark_project(run.user, pid, "tainted")
    else:  # those that left came back before a rebuild: nothing to make again
        sharing.untaint(run.user, pid)
    run.wrote += flow_up(
        run.caller,
        run.conn,
        "project",
        pid,
        children,
        run.settings.project_limit,
        now_iso=run.now_iso,
        before_publish=run.lease.check,
        health=health,
        rebuild=bool(gone),
    )
    if gone:
        with transaction(run.conn):
            run.lease.check()
            sharing.forget_leavers(run.conn, pid, gone)
        assert run.user is not None
        sharing.mark_project(run.user, pid, "rebuilt")
        run.rebuilt.append({"memory": f"project:{pid}", "without": [g.as_dict() for g in gone]})
    project = latest(run.conn, "project", pid)
    if project is not None and not run.scope.get("project"):
        _global_step(run, project)
    elif project is not None:
        run.deferred.append("global: not in this run's scope (--project)")
    return _export(run)


def _progress(run: Run, label: str, done: int, total: int) -> None:
    """Tell the caller's progress bar, and record it on the run row for ``sessions jobs``."""
    import json

    report_progress(run.progress, label, done, total)
    stats = run.caller.stats
    value = {"step": label, "done": done, "total": total, "calls": stats.calls}
    value["tokens"] = stats.charged
    run.conn.execute(
        "UPDATE sess_runs SET progress=? WHERE id=?", (json.dumps(value), run.caller.run_id)
    )


def _export(run: Run) -> tuple[str, str | None]:
    from memcore.sessions.export import export_summaries

    try:
        files, journal_run = export_summaries(
            run.ws,
            run.conn,
            now=run.caller.clock(),
            trigger="schedule" if run.trigger == "auto" else "command",
            session_run=run.caller.run_id,
        )
    except LockBusy:
        run.deferred.append("export: the workspace lock stayed busy; the next run exports")
    else:
        if journal_run:
            run.exported = {"files": files, "journal_run": journal_run}
    return "ok", None


def _global_step(run: Run, project: Any) -> None:
    """Mirror the project memory into the user database and fold changed projects into the
    global memory. Workspaces that reach this step at once take turns on the global lease
    (waiting, never failing); one still waiting after ``global_wait`` leaves the global step
    to its next run (the changed project stays unseen, so it is folded then)."""
    user = run.user
    assert user is not None
    mirror_project(user, project, run.ws.root, run.ws.root.name, run.now_iso)
    run.lease.check()
    glease = Lease(
        user,
        ttl=run.lease.ttl,
        holder=run.lease.holder,
        name=GLOBAL_LEASE_NAME,
    )
    if not glease.acquire_waiting(
        run.caller.clock, wait_seconds=run.global_wait, should_stop=run.caller.should_stop
    ):
        run.deferred.append(
            f"global: another workspace held the global step for {run.global_wait:g}s;"
            " the next run folds this project in"
        )
        return
    run.caller.leases.append(glease)
    try:

        def check_both() -> None:
            run.lease.check()
            glease.check()

        marks = sharing.global_marks(user)
        redo = [p for p, state in marks.items() if state == "rebuilt"]
        run.wrote += flow_up(
            run.caller,
            user,
            "global",
            "",
            latest_projects(user),
            run.settings.global_limit,
            now_iso=run.now_iso,
            before_publish=check_both,
            rebuild=bool(redo),
        )
        if redo:
            with transaction(user):
                check_both()
                sharing.clear_rebuilt(user, redo)
            run.rebuilt.append({"memory": "global", "without": [{"project": p} for p in redo]})
    finally:
        run.caller.leases.remove(glease)
        glease.release()


def _finish(
    run: Run, run_id: str, status: str, error: str | None, report: dict[str, Any], *, lost: bool
) -> None:
    import json

    queued = catalog.candidates(run.conn, catalog.all_sessions(run.conn))
    report.update(
        {
            "run_id": run_id,
            "status": status,
            "error": error,
            "started_at": run.now_iso,
            "finished_at": iso_ms(run.caller.clock()),
            "model": run.caller.llm.name,
            "read": run.read,
            "reviewed": run.reviewed,
            "wrote": run.wrote,
            "skipped": run.skipped,
            "unsorted": run.unsorted,
            "deferred": run.deferred,
            "rebuilt": run.rebuilt,
            "decisions": run.decided,
            "exported": run.exported,
            "scope": run.scope,
            "checked": run.caller.checked,
            "queued": [s.id for s in queued],
            "tokens": run.caller.stats.as_dict(),
        }
    )
    if lost:  # the successor owns the run table now; only record our own row
        with transaction(run.conn):
            run.conn.execute(
                "UPDATE sess_runs SET status=?, finished_at=?, report=?, error=? WHERE id=?",
                (status, report["finished_at"], json.dumps(report), error, run_id),
            )
        return
    with transaction(run.conn):
        run.conn.execute(
            "UPDATE sess_runs SET status=?, finished_at=?, report=?, error=? WHERE id=?",
            (status, report["finished_at"], json.dumps(report), error, run_id),
        )
        if status == "ok":  # a completed job's checklist goes at once; its report stays
            run.conn.execute("UPDATE sess_runs SET progress=NULL WHERE id=?", (run_id,))
        run.conn.execute(
            "DELETE FROM sess_runs WHERE status != 'running' AND started_at < ?",
            (iso_ms(run.now - RUNS_KEPT),),
        )
        if status == "ok":
            set_state(run.conn, "last_success_at", run.now_iso)
        elif status == "failed":
            set_state(run.conn, "last_failure_at", iso_ms(run.caller.clock()))
        elif status == "stopped":  # automatic runs wait the failure backoff after a stop
            set_state(run.conn, "last_stopped_at", iso_ms(run.caller.clock()))
        elif status == "budget":
            set_state(run.conn, "budget_blocked_day", run.now_iso[:10])
    if status == "budget" and run.user is not None:  # every workspace of the user waits
        with transaction(run.user):
            set_state(run.user, "budget_blocked_day", run.now_iso[:10])
