"""The routes behind the page's Memory view and its session jobs.

``GET /api/recall`` answers what ``memcore recall`` prints with ``--json`` (the same library
call, ``memcore.sessions.recall_api.recall``), its query parameters being the command's
options; ``GET /api/sessions/jobs`` lists session dreams as ``memcore sessions jobs`` does,
with today's use of the token budget; ``POST /api/sessions/jobs`` starts, stops, continues or
retries one. A bad query value is a 400 with one line naming it, never a 500.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from memcore.errors import HTTPProblem
from memcore.gateway.security import Schema, read_json

if TYPE_CHECKING:
    from memcore.gateway.app import Gateway

#: query parameter -> what it may hold (the recall arguments of the same name)
RECALL_PARAMS = {
    "memory": "one of global, projects, project, sessions, session, sources, decisions",
    "project": "a project id",
    "session": "a session id",
    "reference": "a memory reference (session:ID@vN, project:ID@vN, global@vN) or a message"
    " reference (session:ID#REF, session:ID#A..B, session:ID#N-M)",
    "version": "an integer from 1",
    "from": "an integer from 0",
    "to": "an integer from 0",
    "cursor": "the nextCursor of an earlier page (N or N:M)",
    "limit": "an integer from 1 to 100",
    "query": "words to look for",
}
_INT_PARAMS = ("version", "from", "to", "limit")
_MAX_INT = 2**31 - 1
_CURSOR = re.compile(r"^\d{1,10}(?::\d{1,10})?$")
_MAX_TEXT_PARAM = 1000


def recall_args(request: Request) -> dict[str, Any]:
    """The recall arguments a query string names; HTTPProblem 400 for anything else."""
    params = request.query_params
    unknown = sorted(set(params) - set(RECALL_PARAMS) - {"workspace"})
    if unknown:
        raise HTTPProblem(
            400,
            f"unknown query parameter(s) {', '.join(unknown)}; allowed: "
            f"{', '.join(RECALL_PARAMS)}, workspace",
        )
    args: dict[str, Any] = {}
    for name in RECALL_PARAMS:
        values = params.getlist(name)
        if not values:
            continue
        if len(values) > 1:
            raise HTTPProblem(400, f"query parameter {name!r} is given {len(values)} times")
        raw = values[0]
        if len(raw) > _MAX_TEXT_PARAM or "\x00" in raw or not _encodable(raw):
            raise HTTPProblem(
                400, f"query parameter {name!r} must be text of at most {_MAX_TEXT_PARAM} chars"
            )
        if name in _INT_PARAMS:
            if not (raw.isascii() and raw.isdigit()) or int(raw) > _MAX_INT:
                raise HTTPProblem(
                    400, f"query parameter {name!r} must be {RECALL_PARAMS[name]}, got {raw!r}"
                )
            args[name] = int(raw)
        elif name == "cursor":
            if not _CURSOR.match(raw):
                raise HTTPProblem(
                    400, f"query parameter 'cursor' must be {RECALL_PARAMS['cursor']}, got {raw!r}"
                )
            args[name] = raw
        elif raw != "":
            args[name] = raw
    if args.get("version") == 0:
        raise HTTPProblem(400, "query parameter 'version' must be an integer from 1, got '0'")
    if "to" in args and "from" not in args:
        args["from"] = 0  # as `memcore recall session ID --to N`
    return args


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _store_error(exc: BaseException) -> HTTPProblem:
    """A session store that cannot be read now (locked, missing folder): 503, one line."""
    return HTTPProblem(503, f"the session store cannot be read now ({exc}); try again")


async def recall_route(gw: Gateway, request: Request) -> Response:
    from memcore.gateway.app import _json
    from memcore.sessions.recall_api import recall

    s = gw.pick(request)
    args = recall_args(request)

    def read() -> dict[str, Any]:
        try:
            return recall(s.ws, args)
        except (sqlite3.Error, OSError) as exc:
            raise _store_error(exc) from None

    out = await asyncio.to_thread(read)
    return _json({**out, "workspace": s.name})


# -- jobs -----------------------------------------------------------------------------------


def _open_runs(ws: Any) -> sqlite3.Connection:
    from memcore.sessions.store import ensure_schema
    from memcore.workspace.db import connect

    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    return conn


def jobs_payload(ws: Any, now: Any, limit: int) -> dict[str, Any]:
    """``GET /api/sessions/jobs``: the runs (``memcore sessions jobs``) and today's usage."""
    from memcore.sessions.control import jobs, usage_today
    from memcore.sessions.settings import sessions_settings
    from memcore.workspace.config import load_config

    budget = sessions_settings(load_config(ws)).daily_token_budget
    try:
        conn = _open_runs(ws)
        try:
            listed = jobs(conn, limit, now=now)
        finally:
            conn.close()
        usage = usage_today(budget, now)
    except (sqlite3.Error, OSError) as exc:
        raise _store_error(exc) from None
    return {"jobs": listed, "usage": usage}


async def jobs_route(gw: Gateway, request: Request) -> Response:
    from memcore.gateway.app import _int_param, _json
    from memcore.workspace.clock import utcnow

    s = gw.pick(request)
    limit = _int_param(request, "limit", 20, 1, 200)
    data = await asyncio.to_thread(jobs_payload, s.ws, utcnow(), limit)
    return _json({"workspace": s.name, "running": gw.scheduler.active.get(s.name), **data})


ACTIONS = ("start", "stop", "continue", "retry")
JOB_FIELDS: Schema = {
    "workspace": ((str, int), False),
    "action": ((str,), True),
    "job": ((str,), False),
    "session": ((str,), False),
    "project": ((str,), False),
}


def _find_job(ws: Any, run_id: str) -> dict[str, Any]:
    from memcore.sessions.control import job

    if not run_id.strip():
        raise HTTPProblem(400, "field 'job' must name a session dream (see GET /api/sessions/jobs)")
    conn = _open_runs(ws)
    try:
        return dict(job(conn, run_id.strip()))
    finally:
        conn.close()


def _stop(ws: Any, run_id: str) -> dict[str, Any]:
    from memcore.sessions.control import request_stop

    j = _find_job(ws, run_id)
    if j["status"] != "running":
        raise HTTPProblem(409, f"session dream {j['id']} is {j['status']}, not running")
    conn = _open_runs(ws)
    try:
        asked = request_stop(conn, str(j["id"]), "stopped from the Dreams page")
    finally:
        conn.close()
    if not asked:
        raise HTTPProblem(409, f"session dream {j['id']} ended before the stop reached it")
    return {"job": j["id"], "stop_requested": True}


async def jobs_action(gw: Gateway, request: Request) -> Response:
    """Start a session dream (optionally one scope), stop a running one, or continue / retry
    a stopped or failed one in its scope from the saved progress. A started run goes on in
    the background; the answer comes at once and the jobs list shows its progress."""
    from memcore.gateway.app import _json

    body = await read_json(request, JOB_FIELDS, gw.guard.max_body)
    s = gw.pick(request, body)
    action = body["action"].strip().lower()
    if action not in ACTIONS:
        raise HTTPProblem(400, f"field 'action' must be one of {', '.join(ACTIONS)}")
    if action == "stop":
        out = await asyncio.to_thread(_stop, s.ws, body.get("job") or "")
        return _json({**out, "action": action, "workspace": s.name})
    scope: dict[str, str] = {}
    retry_of = None
    if action == "start":
        if body.get("job") is not None:
            raise HTTPProblem(
                400, "field 'job' is for stop, continue and retry; start takes a scope"
            )
        if body.get("session") and body.get("project"):
            raise HTTPProblem(400, "fields 'session' and 'project' cannot be combined; pick one")
        scope = {k: body[k].strip() for k in ("session", "project") if (body.get(k) or "").strip()}
    else:
        if body.get("session") is not None or body.get("project") is not None:
            raise HTTPProblem(400, f"{action} runs the job's own scope; drop 'session'/'project'")
        j = await asyncio.to_thread(_find_job, s.ws, body.get("job") or "")
        if j["status"] == "running":
            raise HTTPProblem(409, f"session dream {j['id']} is still running; stop it first")
        scope = dict(j["scope"] or {})
        retry_of = j["id"]
    await asyncio.to_thread(_check_scope, s.ws, scope)
    from memcore.sessions.jobs import manual_job

    gw.scheduler.launch(s, manual_job(scope.get("session"), scope.get("project")))
    return _json(
        {
            "started": True,
            "action": action,
            "scope": scope,
            "retry_of": retry_of,
            "workspace": s.name,
        }
    )


def _check_scope(ws: Any, scope: dict[str, str]) -> None:
    """An unknown session or a foreign project is a 400 now, and a session dream running in
    another process (its lease held) a 409, not a failed job later."""
    from memcore.errors import InputError
    from memcore.sessions import catalog
    from memcore.sessions.lease import lease_holder
    from memcore.sessions.settings import project_id, sessions_settings
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    conn = _open_runs(ws)
    try:
        held = lease_holder(conn, utcnow())
    finally:
        conn.close()
    if held is not None:
        raise HTTPProblem(
            409,
            f"a session dream is running (pid {held['pid']} on {held['host']}, lease until"
            f" {held['expires_at']}); stop it or wait for it to end",
        )

    if scope.get("project") is not None and scope["project"] != project_id(ws):
        raise InputError(
            f"project {scope['project']!r} is not this workspace's project; allowed:"
            f" {project_id(ws)}"
        )
    if scope.get("session") is not None:
        folder = sessions_settings(load_config(ws)).sessions_dir(ws)
        if scope["session"] not in catalog.session_files(folder):
            raise InputError(f"session {scope['session']!r}: no such session in {folder}")
