"""Stopping the gateway closes every connection it accepted, including one accepted while it was
stopping: none is left open for the grace period, none leaks its socket."""

from __future__ import annotations

import gc
import socket
import threading
import warnings

from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway

PER_THREAD = 150


def _connect_until(port: int, stop: threading.Event, out: list[socket.socket]) -> None:
    """Open idle connections until told to stop (or PER_THREAD of them)."""
    for _ in range(PER_THREAD):
        if stop.is_set():
            return
        try:
            out.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            return  # the listener is gone: refused, which is what stopping means


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False  # still open: the gateway kept it after it stopped


def test_stop_closes_connections_accepted_while_stopping(ws: Workspace) -> None:
    for _round in range(3):
        socks: list[socket.socket] = []
        stop = threading.Event()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            with gateway([ws], scheduler=False, shutdown_grace=60.0) as (running, client, _):
                assert client.get("/api/status").status_code == 200
                threads = [
                    threading.Thread(target=_connect_until, args=(running.port, stop, socks))
                    for _ in range(3)
                ]
                for t in threads:
                    t.start()
                # the stop below races with connections being accepted
                while not socks and any(t.is_alive() for t in threads):
                    threading.Event().wait(0.005)
                running.stop()
                stop.set()
                for t in threads:
                    t.join()
                # the grace period is 60 s: had stop waited for a connection it never told to
                # close, the thread would still be serving (stop() gives up after 30 s)
                assert not running.thread.is_alive()
            try:
                left_open = [s for s in socks if not _closed_by_server(s)]
            finally:
                for s in socks:
                    s.close()
            gc.collect()
        assert socks
        assert not left_open, f"{len(left_open)} of {len(socks)} connections still open"
        leaks = [w for w in caught if issubclass(w.category, ResourceWarning)]
        assert not leaks, leaks[:3]
