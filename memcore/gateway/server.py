"""Starting the gateway: bind the socket (clear error when the port is taken), run uvicorn.

``serve`` blocks until SIGINT/SIGTERM (uvicorn's handlers; the app's lifespan then stops the
scheduler, which records unfinished runs as interrupted). ``serve_in_thread`` runs the same
server in a thread for tests and benchmarks.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memcore.errors import PortInUse
from memcore.gateway.app import Gateway, create_app
from memcore.gateway.scheduler import Scheduler
from memcore.gateway.security import Guard, is_loopback
from memcore.gateway.workspaces import Served

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger("memcore.gateway")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); PortInUse with what to do when that fails."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted sockets only when the
    # protocol says TCP; without it every keep-alive response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise PortInUse(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; "
            "is another gateway running? choose another port with --port"
        ) from None
    sock.set_inheritable(True)
    return sock


@dataclass
class GatewayOptions:
    host: str = "127.0.0.1"
    port: int = 8787
    token: str = ""
    max_concurrent: int = 4
    max_sleep: float = 30.0
    shutdown_grace: float = 20.0
    scheduler: bool = True
    embed_token: bool = True
    allow_hosts: tuple[str, ...] = ()
    read_token: bool | None = None  # None: on for a non-loopback host, off on loopback


def read_token_default(opts: GatewayOptions) -> bool:
    """Read-token mode unless chosen: on when the gateway listens beyond loopback."""
    return opts.read_token if opts.read_token is not None else not is_loopback(opts.host)


def build(served: list[Served], opts: GatewayOptions) -> Gateway:
    guard = Guard(
        token=opts.token,
        bind_host=opts.host,
        extra_hosts=opts.allow_hosts,
        embed_token=opts.embed_token,
        read_token=read_token_default(opts),
    )
    sched = Scheduler(
        served,
        max_concurrent=opts.max_concurrent,
        max_sleep=opts.max_sleep,
        shutdown_grace=opts.shutdown_grace,
        enabled=opts.scheduler,
    )
    return Gateway(served, guard, sched)


def _quiet_server(config: uvicorn.Config, tick: float = 1.0) -> uvicorn.Server:
    """A uvicorn Server whose housekeeping loop wakes once a second, not ten times.

    uvicorn polls ``should_exit`` every 0.1 s; for an idle local gateway that is most of its
    CPU. Once a second still refreshes the Date header and notices a signal within 1 s.
    """
    import asyncio

    import uvicorn

    class QuietServer(uvicorn.Server):
        async def main_loop(self) -> None:
            counter = 0
            should_exit = await self.on_tick(counter)
            while not should_exit:
                counter = (counter + 10) % 864000  # every call counts as a full second
                await asyncio.sleep(tick)
                should_exit = await self.on_tick(counter)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # uvicorn tells the connections open when shutdown starts to close; one accepted a
            # moment later (already in the accept path) was never told, so shutdown waited the
            # whole grace period for it and the loop ended with its socket still open.
            told = set(self.server_state.connections)

            async def tell_late() -> None:
                while True:
                    for conn in list(self.server_state.connections):
                        if conn not in told:
                            told.add(conn)
                            conn.shutdown()
                    await asyncio.sleep(0.02)

            late = asyncio.ensure_future(tell_late())
            try:
                await super().shutdown(sockets)
            finally:
                for _ in range(25):  # half a second for answers still being written
                    if not self.server_state.connections:
                        break
                    await asyncio.sleep(0.02)
                late.cancel()
                for conn in list(self.server_state.connections):
                    conn.transport.abort()  # past the grace period: close, never leak
                await asyncio.sleep(0)  # let the aborted transports close their sockets

    return QuietServer(config)


def _uvicorn_config(gw: Gateway, opts: GatewayOptions) -> uvicorn.Config:
    import uvicorn

    return uvicorn.Config(
        create_app(gw),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(opts.shutdown_grace) + 1,
        server_header=False,
    )


def serve(
    served: list[Served], opts: GatewayOptions, banner: Callable[[str], None] | None = None
) -> int:
    """Run the gateway in the foreground until a signal; return the exit code.

    Raises PortInUse before anything else when the address cannot be bound. ``banner`` gets
    the page URL once the socket is bound.
    """

    from memcore.schedule import jobs as schedule

    sock = bind_socket(opts.host, opts.port)
    port = sock.getsockname()[1]
    if banner is not None:
        shown = f"[{opts.host}]" if ":" in opts.host else opts.host
        banner(f"http://{shown}:{port}")
    schedule.load_job_modules()
    if not is_loopback(opts.host):
        log.warning(
            "gateway listening on %s, not loopback: anyone who can reach this address can read "
            "status; mutating routes%s need the token",
            opts.host,
            " and memory text" if read_token_default(opts) else "",
        )
    gw = build(served, opts)
    log.info(
        "gateway start host=%s port=%d workspaces=%s jobs=%s",
        opts.host,
        port,
        ",".join(f"{s.name}={s.ws.root}" for s in served),
        ",".join(j.name for j in schedule.registered_jobs()),
    )
    server = _quiet_server(_uvicorn_config(gw, opts))
    # uvicorn re-raises the signal it handled once it has shut down; make that a clean exit
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    log.info("gateway stop host=%s port=%d", opts.host, port)
    return 0 if server.started else 1


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop()


@dataclass
class Running:
    """A gateway served from a thread (tests, benchmarks)."""

    gateway: Gateway
    host: str
    port: int
    server: uvicorn.Server
    thread: threading.Thread

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@contextlib.contextmanager
def serve_in_thread(served: list[Served], opts: GatewayOptions) -> Iterator[Running]:
    """Start the gateway on ``opts.host``/``opts.port`` (0 = a free port) in a thread."""

    sock = bind_socket(opts.host, opts.port)
    port = sock.getsockname()[1]
    gw = build(served, opts)
    server = _quiet_server(_uvicorn_config(gw, opts), tick=0.05)  # stops fast in tests
    errors: list[BaseException] = []

    def target() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True, name="memcore-gateway")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if errors or not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"gateway did not start: {errors!r}")
        time.sleep(0.01)
    running = Running(gw, opts.host, port, server, thread)
    try:
        yield running
    finally:
        running.stop()
        sock.close()


def print_banner(url: str, token_file: str | None) -> None:
    """Tell the user where the page is and where the token is kept, on stderr (never the token
    itself: a log may be read by others)."""
    print(f"memcore gateway: {url}/", file=sys.stderr)
    if token_file:
        print(
            f"memcore gateway: token in {token_file} (mode 0600; set MEMCORE_TOKEN to choose one)",
            file=sys.stderr,
        )
