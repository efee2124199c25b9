"""The gateway's Starlette app: JSON API, Dreams page, and the scheduler in its lifespan.

Every request passes the Host/Origin check; every POST also needs the bearer token and
``application/json``; bodies are size-limited and checked field by field (400, never 500).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from string import Template
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from memcore import __version__
from memcore.errors import ConfigError, HTTPProblem, MemcoreError, WorkspaceError, error_class
from memcore.gateway import api
from memcore.gateway.scheduler import Scheduler, in_daemon_thread
from memcore.gateway.security import Guard, Schema, read_json
from memcore.gateway.workspaces import Served, pick
from memcore.schedule import jobs as schedule
from memcore.search.connections import IndexPool
from memcore.search.lanes import SearchLanes
from memcore.search.recorder import BatchRecorder
from memcore.workspace.clock import utcnow
from memcore.workspace.jsonkeys import camel_keys

log = logging.getLogger("memcore.gateway")

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
PAGE_CSP = (
    "default-src 'self'; script-src 'self' {scripts}; style-src 'self' {styles}; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'none'"
)
#: what the page inlines, in the order of its markers ``<script>@NAME</script>`` and
#: ``<style>@NAME</style>`` in dreams.html
PAGE_SCRIPTS = ("boot.js", "dreams.js", "memory.js", "jobs.js")
PAGE_STYLES = ("dreams.css",)
STATIC = {
    "dreams.js": "text/javascript",
    "memory.js": "text/javascript",
    "jobs.js": "text/javascript",
    "dreams.css": "text/css",
}

Handler = Callable[[Request], Awaitable[Response]]
#: Threads for searches, shared by the workspaces' lanes (memcore.search.lanes), so that the
#: lanes of different workspaces never wait for one another.
SEARCH_WORKERS = 16
#: Threads one workspace's batch of searches is spread over once its query vectors are in. A
#: search is mostly Python, so more threads only take turns on the interpreter lock, and on an
#: otherwise idle 2-core machine handing the lock between cores costs more than it gains: 200
#: concurrent searches of one workspace (use-m3, load 1-1.5) cost the gateway 1.4-1.5 CPU-s
#: over 1 thread, 1.8 over 2, 2.0 over 4 and 2.7-3.3 over 16 (p95 1.2-1.3, 1.4-1.5, 1.5-1.6
#: and 2.0-2.5 s). Two keep a second thread's share of a busy machine (one thread alone got
#: the least of it at load 12-19). ``MEMCORE_SEARCH_THREADS`` sets another width (see
#: :func:`lane_width`; ``python bench/bench_gateway.py --search-threads N`` measures one).
LANE_WIDTH = 2


def lane_width() -> int:
    """Threads per batch: ``MEMCORE_SEARCH_THREADS`` (1 to :data:`SEARCH_WORKERS`) when set,
    else :data:`LANE_WIDTH`; any other value is a ConfigError naming it."""
    raw = os.environ.get("MEMCORE_SEARCH_THREADS", "").strip()
    if not raw:
        return LANE_WIDTH
    if raw.isdecimal() and raw.isascii() and 1 <= int(raw) <= SEARCH_WORKERS:
        return int(raw)
    raise ConfigError(
        f"MEMCORE_SEARCH_THREADS={raw!r} is not allowed: a whole number from 1 to {SEARCH_WORKERS}"
    )


class Gateway:
    """The served workspaces, the guard (token, hosts) and the scheduler, shared by routes."""

    def __init__(self, served: list[Served], guard: Guard, scheduler: Scheduler) -> None:
        self.served = served
        self.guard = guard
        self.scheduler = scheduler
        # Searches get threads of their own: 200 queued searches never delay a status poll or
        # the page, which use the loop's default executor.
        self.search_pool = ThreadPoolExecutor(SEARCH_WORKERS, thread_name_prefix="memcore-search")
        # Searches hand their hits to one writer that records them in batches (one append,
        # one fold per batch): a search answers without waiting for the store rewrite.
        self.recorder = BatchRecorder()
        self.index_pool = IndexPool()  # index connections kept open between searches
        # one lane per workspace: the searches waiting in it run as one batch
        self.lanes = SearchLanes(self.search_pool, width=lane_width())
        scheduler.after_run = self._after_run

    @staticmethod
    def _after_run(ws: Any) -> dict[str, Any]:
        """The sizes a scheduled run left (its status is computed afresh: the run changed
        the store)."""
        api.forget_status(ws)
        return api.sizes_snapshot(ws, utcnow())

    def warm_up(self) -> None:
        """Load the served workspaces' search models now (in the background at start), so
        the first searches do not all wait for a model load. The index is left to the
        first search (building a big one at every start would cost a lot of CPU)."""
        from memcore.search.companion import companion_for
        from memcore.search.query import search_embedder

        for s in self.served:
            if s.ws.root.is_dir():
                # falls back to hashing (said at search) on a problem; the second model too
                companion_for(search_embedder(s.ws))

    def pick(self, request: Request, body: dict[str, Any] | None = None) -> Served:
        """The workspace a request names; WorkspaceError (422) when its folder vanished, so no
        route ever writes into (and re-creates) a moved or deleted workspace."""
        sel = (body or {}).get("workspace")
        if sel is None:
            sel = request.query_params.get("workspace")
        s = pick(self.served, None if sel is None else str(sel))
        if not s.ws.root.is_dir():
            raise WorkspaceError(
                f"workspace {s.ws.root} does not exist any more (moved or deleted); "
                "put it back or restart the gateway without it"
            )
        return s


def _json(data: Any, status: int = 200) -> JSONResponse:
    """A JSON answer; keys in camelCase, as everywhere memcore speaks JSON."""
    return JSONResponse(camel_keys(data), status_code=status, headers=SECURITY_HEADERS)


def endpoint(
    gw: Gateway,
    fn: Callable[[Gateway, Request], Awaitable[Response]],
    *,
    mutating: bool,
    memory_text: bool = False,
) -> Handler:
    """Wrap a route: Host/Origin (all), token + content type (mutating), the token in
    read-token mode (GET routes that return memory text), errors → JSON."""

    async def handler(request: Request) -> Response:
        try:
            gw.guard.check_host_origin(request)
            if mutating:
                await gw.guard.check_mutation(request)
            elif memory_text:
                gw.guard.check_read(request)
            return await fn(gw, request)
        except asyncio.CancelledError:
            # uvicorn cancels requests still running when the shutdown grace is over: answer
            # them in JSON (the run is recorded as interrupted) instead of a plain-text 500
            # and a traceback per request
            log.warning("request cut by shutdown: %s %s", request.method, request.url.path)
            return JSONResponse(
                {"error": "the gateway is shutting down; the run was interrupted, try again"},
                status_code=503,
                headers={**SECURITY_HEADERS, "Retry-After": "30"},
            )
        except HTTPProblem as p:
            return _json({"error": p.message}, p.status)
        except MemcoreError as exc:
            return _json({"error": str(exc)}, exc.http_status)
        except Exception:
            log.exception("request failed: %s %s", request.method, request.url.path)
            return _json({"error": "internal error; see the gateway log"}, 500)

    return handler


def _forgets_status(handler: Handler) -> Handler:
    """``handler``, after which every workspace's status is computed afresh (a promotion, a
    review, a dream or a command may have changed the store; searches only record, and
    their recordings show within ``api.STATUS_REFRESH``)."""

    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        finally:
            api.forget_status()

    return wrapped


def _int_param(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()) or not lo <= int(raw) <= hi:
        raise HTTPProblem(400, f"query parameter {name!r} must be an integer from {lo} to {hi}")
    return int(raw)


# -- GET routes ---------------------------------------------------------------------------


async def healthz(gw: Gateway, request: Request) -> Response:
    return _json({"ok": True, "version": __version__, "workspaces": len(gw.served)})


async def workspaces(gw: Gateway, request: Request) -> Response:
    return _json({"workspaces": [s.to_json() for s in gw.served]})


def full_status(gw: Gateway, s: Served) -> dict[str, Any]:
    out = api.status_payload(s.ws, utcnow())
    out["workspaceName"] = s.name
    out["workspaceIndex"] = s.index
    out["running"] = gw.scheduler.active.get(s.name)
    out["workspaceError"] = gw.scheduler.errors.get(s.name)
    return out


async def status(gw: Gateway, request: Request) -> Response:
    s = gw.pick(request)
    return _json(await asyncio.to_thread(full_status, gw, s))


async def candidates(gw: Gateway, request: Request) -> Response:
    s = gw.pick(request)
    limit = _int_param(request, "limit", 25, 1, 1000)
    return _json(await asyncio.to_thread(api.candidates_payload, s.ws, utcnow(), limit))


async def runs(gw: Gateway, request: Request) -> Response:
    s = gw.pick(request)
    limit = _int_param(request, "limit", 20, 1, 500)
    job = request.query_params.get("job")
    data = await asyncio.to_thread(schedule.recent_runs, s.ws, limit, job)
    return _json({"workspace": s.name, "runs": data})


async def review_list(gw: Gateway, request: Request) -> Response:
    s = gw.pick(request)
    items = await asyncio.to_thread(api.review_payload, s.ws)
    return _json({"workspace": s.name, "items": items})


async def sessions_route(gw: Gateway, request: Request) -> Response:
    s = gw.pick(request)
    data = await asyncio.to_thread(api.sessions_payload, s.ws, utcnow())
    return _json({"workspace": s.name, **data})


# -- POST routes --------------------------------------------------------------------------

WS_FIELD: Schema = {"workspace": ((str, int), False)}


async def promote_route(gw: Gateway, request: Request) -> Response:
    body = await read_json(
        request,
        {**WS_FIELD, "apply": ((bool,), False), "limit": ((int,), False)},
        gw.guard.max_body,
    )
    s = gw.pick(request, body)
    limit = body.get("limit")
    if limit is not None and not 0 <= limit <= 10_000:
        raise HTTPProblem(400, "field 'limit' must be from 0 to 10000")
    from memcore.promotion import promote

    if not body.get("apply"):
        res = await asyncio.to_thread(lambda: promote.preview(s.ws, now=utcnow(), limit=limit))
        return _json(res.to_json())
    full: dict[str, Any] = {}

    def run(ws: Any, now: Any) -> dict[str, Any]:
        settings, _ = api.settings_or_default(ws)
        full.update(
            promote.apply(ws, now=now, limit=limit, settings=settings, trigger="page").to_json()
        )
        return api.promote_counters(full)

    job = schedule.Job("promote", lambda *a: None, run, hold_lock=False)
    outcome = await gw.scheduler.run(s, job, trigger="manual")
    _raise_failed(outcome)
    gw.scheduler.wake()
    return _json(full)


def _raise_failed(outcome: schedule.RunOutcome) -> None:
    """A failed job run as the HTTP status of its error class (500 for anything else)."""
    if outcome.status != "failed":
        return
    cls = error_class(outcome.error_type or "")
    raise HTTPProblem(cls.http_status if cls else 500, outcome.error or "run failed")


async def dream_route(gw: Gateway, request: Request) -> Response:
    body = await read_json(request, WS_FIELD, gw.guard.max_body)
    s = gw.pick(request, body)
    outcome = await gw.scheduler.run(s, api.DREAM_JOB, trigger="manual")
    _raise_failed(outcome)
    gw.scheduler.wake()
    # runId is the journal's id (what `memcore undo` takes); scheduleRunId the run-history row
    return _json(
        {
            **outcome.result,
            "runId": outcome.result.get("runId"),
            "scheduleRunId": outcome.run_id,
            "workspace": s.name,
        }
    )


async def search_route(gw: Gateway, request: Request) -> Response:
    body = await read_json(
        request, {**WS_FIELD, "query": ((str,), True), "limit": ((int,), False)}, gw.guard.max_body
    )
    s = gw.pick(request, body)
    query = body["query"].strip()
    if not query:
        raise HTTPProblem(400, "field 'query' must not be empty")
    limit = body.get("limit", 10)
    if not 1 <= limit <= 100:
        raise HTTPProblem(400, "field 'limit' must be from 1 to 100")
    from memcore.search.query import SearchResult, prepare_searches, search

    # The searches of one workspace wait in its lane and run in batches (memcore.search.lanes);
    # they hand their hits to the batch recorder (one writer, folded when the lock is free),
    # so neither the store rewrite nor a dream run holding the lock stalls them, and one
    # workspace's searches never wait for another's.
    pool = gw.index_pool
    since = pool.mark()  # any index update that starts from now on serves this search
    now = utcnow()

    def run(config: Any) -> SearchResult:  # the batch's settings (None: each reads its own)
        return search(
            s.ws, query, limit=limit, now=now, recorder=gw.recorder, pool=pool, since=since,
            config=config,
        )  # fmt: skip

    prepare = functools.partial(prepare_searches, s.ws)
    res = await asyncio.wrap_future(gw.lanes.submit(str(s.ws.root), query, run, prepare))
    out = res.to_json()
    out["recorded"] = res.recorded
    out["recordError"] = res.record_error
    # keys already in camelCase, values plain JSON: rendered by orjson on the event loop's
    # thread (the json module and camel_keys cost more than the rest of the answer)
    import orjson

    return Response(orjson.dumps(out), media_type="application/json", headers=SECURITY_HEADERS)


async def commands_route(gw: Gateway, request: Request) -> Response:
    body = await read_json(request, {**WS_FIELD, "text": ((str,), True)}, gw.guard.max_body)
    s = gw.pick(request, body)
    from memcore.promotion.commands import handle_dreaming

    text = body["text"].strip()
    word = text.split()[0].lower() if text.split() else ""
    if word not in ("/dreaming", "dreaming"):
        raise HTTPProblem(
            400, "unknown command; supported: /dreaming [off|core|rem|deep|status|help]"
        )
    reply = await asyncio.to_thread(handle_dreaming, s.ws, text)
    gw.scheduler.wake()  # a mode change counts now, not after a restart
    return _json({"reply": reply, "workspace": s.name})


REVIEW_CHOICES = ("a", "b", "both", "apply", "reject", "skip")


async def review_resolve(gw: Gateway, request: Request) -> Response:
    """Settle one review item; 409 while a run of the workspace is in progress."""
    body = await read_json(
        request, {**WS_FIELD, "item": ((int,), True), "choice": ((str,), True)}, gw.guard.max_body
    )
    s = gw.pick(request, body)
    item, choice = body["item"], body["choice"].strip().lower()
    if item < 1:
        raise HTTPProblem(400, "field 'item' must be a positive review item id")
    if choice not in REVIEW_CHOICES:
        raise HTTPProblem(400, f"field 'choice' must be one of {', '.join(REVIEW_CHOICES)}")
    out = await gw.scheduler.exclusive(
        s, "review", lambda: api.resolve_review(s.ws, item, choice, utcnow())
    )
    gw.scheduler.wake()
    return _json({**out, "choice": choice, "workspace": s.name})


# -- the page -----------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("memcore.gateway").joinpath(name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _page_assets() -> tuple[dict[str, str], str]:
    """The page's stylesheet and scripts, inlined in it (one answer instead of five requests
    before the first frame; every answer is ``no-store``, so they were never cached), and
    the page's CSP, which allows exactly these by their hashes and otherwise only the
    page's own files."""
    import base64
    import hashlib

    texts = {name: _asset(name) for name in (*PAGE_SCRIPTS, *PAGE_STYLES)}
    for name, text in texts.items():
        if "</script" in text.lower() or "</style" in text.lower():
            raise RuntimeError(f"{name} cannot be inlined: it holds a closing tag")

    def digest(name: str) -> str:
        raw = hashlib.sha256(texts[name].encode("utf-8")).digest()
        return f"'sha256-{base64.b64encode(raw).decode()}'"

    csp = PAGE_CSP.format(
        scripts=" ".join(map(digest, PAGE_SCRIPTS)), styles=" ".join(map(digest, PAGE_STYLES))
    )
    return texts, csp


def _inline(page: str, texts: dict[str, str]) -> str:
    """The page with each marker replaced by its file (after the template's substitution:
    the scripts' own ``${…}`` are not template fields)."""
    for name, text in texts.items():
        tag = "style" if name.endswith(".css") else "script"
        page = page.replace(f"<{tag}>@{name}</{tag}>", f"<{tag}>{text}</{tag}>", 1)
    return page


async def page(gw: Gateway, request: Request) -> Response:
    s = gw.pick(request)
    st = await asyncio.to_thread(full_status, gw, s)
    token = gw.guard.token if gw.guard.page_may_embed_token(request) else ""
    options = "".join(
        f'<option value="{html.escape(x.name)}"{" selected" if x is s else ""}>'
        f"{html.escape(x.name)}</option>"
        for x in gw.served
    )
    nxt = st.get("nextRunAt") or {}
    values = {
        "workspace": html.escape(s.name),
        "workspace_path": html.escape(str(s.ws.root)),
        "workspace_options": options,
        "token": html.escape(token),
        "read_token": "1" if gw.guard.read_token else "",
        "short_term": st.get("shortTermCount", 0),
        "long_term": st.get("longTermCount", 0),
        "promoted_total": st.get("promotedTotal", 0),
        "promoted_today": st.get("promotedToday", 0),
        "next_local": html.escape(_local_text(nxt.get("local")) or "disabled"),
        "next_utc": html.escape(
            f"{_utc_text(nxt['utc'])} · {nxt['timezone']}" if nxt else "mode is off"
        ),
        "mode": html.escape(str(st.get("mode"))),
        "memory_size": html.escape(memory_size_text(st.get("memorySize") or {})),
        "next_jobs": html.escape(next_jobs_text(st.get("jobs") or {})),
        "version": __version__,
    }
    texts, csp = _page_assets()
    text = _inline(Template(_asset("dreams.html")).safe_substitute(values), texts)
    return HTMLResponse(text, headers={**SECURITY_HEADERS, "Content-Security-Policy": csp})


def memory_size_text(size: dict[str, Any]) -> str:
    """``12345 / 20000 chars`` (the page's JS writes the same)."""
    over = " (over budget)" if size.get("overBudget") else ""
    return f"{size.get('chars', 0)} / {size.get('budgetChars', 0)} chars{over}"


def next_jobs_text(jobs: dict[str, Any]) -> str:
    """The next run of every scheduled job: ``promote 2026-11-30 03:00 UTC · consolidate …``."""
    parts = []
    for name, j in sorted(jobs.items()):
        nxt = j.get("nextRunAt")
        parts.append(f"{name} {_utc_text(nxt['utc']) if nxt else 'not scheduled'}")
    return " · ".join(parts)


def _local_text(iso: str | None) -> str:
    """``2026-11-30T06:00+01:00`` → ``2026-11-30 06:00 (+01:00)`` (same as the page's JS)."""
    if not iso:
        return ""
    day, _, rest = iso.partition("T")
    return f"{day} {rest[:5]} ({rest[5:]})" if len(rest) > 5 else f"{day} {rest}"


def _utc_text(iso: str) -> str:
    day, _, rest = iso.partition("T")
    return f"{day} {rest[:5]} UTC"


async def static(gw: Gateway, request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        raise HTTPProblem(404, "not found")
    return Response(_asset(name), media_type=STATIC[name], headers=SECURITY_HEADERS)


# -- assembly -------------------------------------------------------------------------------

#: GET routes whose answers carry memory text (snippets, review texts, health entries): in
#: read-token mode they need the token, like every POST.
MEMORY_TEXT = (candidates, review_list, sessions_route)


def create_app(gw: Gateway) -> Starlette:
    """The ASGI app; its lifespan starts and stops ``gw.scheduler``."""
    from memcore.gateway import memory_routes as mem

    # the Memory view's short memories and transcripts, and the jobs' failure reasons
    memory_text = (*MEMORY_TEXT, mem.recall_route, mem.jobs_route)

    def r(path: str, fn: Any, method: str) -> Route:
        handler = endpoint(gw, fn, mutating=method == "POST", memory_text=fn in memory_text)
        if method == "POST" and fn is not search_route:
            handler = _forgets_status(handler)  # the page sees its own change at once
        return Route(path, handler, methods=[method])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gw.scheduler.start()
        asyncio.get_running_loop().run_in_executor(gw.search_pool, gw.warm_up)
        try:
            yield
        finally:
            # every recall a search accepted is written first (within the grace period; the
            # fold waits for no lock: with a run holding it, the batch stays in the recall log)
            await asyncio.to_thread(gw.recorder.close, gw.scheduler.shutdown_grace)
            await gw.scheduler.stop()
            gw.lanes.close()
            gw.search_pool.shutdown(wait=False, cancel_futures=True)
            gw.index_pool.close()

    routes = [
        r("/", page, "GET"),
        r("/static/{name}", static, "GET"),
        r("/healthz", healthz, "GET"),
        r("/api/workspaces", workspaces, "GET"),
        r("/api/status", status, "GET"),
        r("/api/candidates", candidates, "GET"),
        r("/api/runs", runs, "GET"),
        r("/api/review", review_list, "GET"),
        r("/api/review", review_resolve, "POST"),
        r("/api/sessions", sessions_route, "GET"),
        r("/api/sessions/jobs", mem.jobs_route, "GET"),
        r("/api/sessions/jobs", mem.jobs_action, "POST"),
        r("/api/recall", mem.recall_route, "GET"),
        r("/api/memories/promote", promote_route, "POST"),
        r("/api/memories/dream", dream_route, "POST"),
        r("/api/memories/search", search_route, "POST"),
        r("/api/commands", commands_route, "POST"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.gateway = gw
    return app


__all__ = ["Gateway", "create_app", "in_daemon_thread"]
