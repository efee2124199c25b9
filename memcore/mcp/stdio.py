"""``memcore mcp`` over stdio, with the handshake answered before the MCP SDK is loaded.

Importing the SDK's server takes about a second on a small machine, and a client waits for the
``initialize`` answer before anything else. So the first line on stdin is read here: when it is
an ``initialize`` request for a protocol revision the SDK negotiates, the answer the SDK would
give (the same capabilities, instructions, server name and version, the client's revision) goes
out at once, while the SDK loads in a thread. The SDK then serves the connection unchanged, over
two pipes this module relays: it sees the whole input, the ``initialize`` first, and its own
answer to it is compared with the early one and dropped (a difference is reported on stderr).
Any other first line, or a revision not listed here, is left to the SDK to answer.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from memcore.workspace.core import Workspace

__all__ = ["CAPABILITIES", "HANDSHAKE_VERSIONS", "INSTRUCTIONS", "early_answer", "run_stdio"]

INSTRUCTIONS = (
    "Long-term and daily memory of this agent's workspace. Use memory_search before "
    "answering questions about earlier work; read exact lines with memory_get."
)
#: The revisions the SDK accepts as asked in ``initialize`` (``mcp_types`` lists them as
#: HANDSHAKE_PROTOCOL_VERSIONS); for any other it answers with its own choice.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: What the SDK's server announces for memcore's tools (no prompts, no resources).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
_MAX_FIRST_LINE = 1 << 20  # a longer first line is no handshake worth answering early


def early_answer(line: bytes, version: str) -> tuple[Any, dict[str, Any]] | None:
    """(request id, result) of the answer to ``line`` when it is an ``initialize`` request
    this module answers for the SDK; None to leave it to the SDK."""
    try:
        msg = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None
    rid = msg.get("id")
    if msg.get("method") != "initialize" or isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    params = msg.get("params")
    if not isinstance(params, dict):
        return None
    client = params.get("clientInfo")
    if (
        params.get("protocolVersion") not in HANDSHAKE_VERSIONS
        or not isinstance(params.get("capabilities"), dict)
        or not isinstance(client, dict)
        or not isinstance(client.get("name"), str)
        or not isinstance(client.get("version"), str)
    ):
        return None
    return rid, {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": params["protocolVersion"],
        "serverInfo": {"name": "memcore", "version": version},
    }


def _read_first_line(fd: int) -> bytes:
    """Bytes from ``fd`` up to and including the first newline (and whatever came with it),
    or everything up to end of input."""
    buf = bytearray()
    while b"\n" not in buf and len(buf) < _MAX_FIRST_LINE:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pump_in(head: bytes, src: int, dst: int) -> None:
    """The client's input to the SDK: ``head`` (already read), then the rest until EOF."""
    try:
        _write_all(dst, head)
        while chunk := os.read(src, 65536):
            _write_all(dst, chunk)
    except OSError:
        pass  # the SDK stopped reading: it is shutting down
    finally:
        os.close(dst)


def _pump_out(src: int, dst: int, early: tuple[Any, dict[str, Any]] | None, end: bytes) -> None:
    """The SDK's output to the client, less its answer to an ``initialize`` answered early,
    until the line ``end`` (the SDK keeps a copy of the pipe open, so no end of file comes)."""
    broken = False
    with os.fdopen(src, "rb") as lines:
        for line in lines:
            if line == end:
                return
            if early is not None and _is_answer_to(line, early[0]):
                got = orjson.loads(line)
                if got.get("result") != early[1]:
                    sys.stderr.write(
                        "memcore mcp: warning: the SDK's initialize answer differs from the one "
                        f"sent early: {line.decode('utf-8', 'replace').strip()}\n"
                    )
                early = None
                continue
            if not broken:
                try:
                    _write_all(dst, line)
                except OSError:
                    broken = True  # the client is gone; keep draining so the SDK never blocks


def _is_answer_to(line: bytes, rid: Any) -> bool:
    try:
        msg = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(msg, dict) and "method" not in msg and msg.get("id") == rid


def run_stdio(ws: Workspace) -> None:
    """Serve ``ws`` over stdio until the client closes its end."""
    from memcore import __version__

    client_in = os.dup(0)
    client_out = os.dup(1)
    built: dict[str, Any] = {}

    def load() -> None:
        try:
            from memcore.mcp.server import build_server
            from memcore.search.connections import IndexPool

            built["pool"] = IndexPool()  # kept between searches, closed at the end
            built["server"] = build_server(ws, built["pool"])
        except BaseException as exc:  # re-raised in the main thread
            built["error"] = exc

    loader = threading.Thread(target=load, name="memcore-mcp-load", daemon=True)
    loader.start()
    head = _read_first_line(client_in)
    early = early_answer(head.split(b"\n", 1)[0], __version__) if b"\n" in head else None
    if early is not None:
        response = {"jsonrpc": "2.0", "id": early[0], "result": early[1]}
        with contextlib.suppress(OSError):
            _write_all(client_out, orjson.dumps(response) + b"\n")
    loader.join()
    if "error" in built:
        raise built["error"]
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(sdk_in_r, 0)
    os.dup2(sdk_out_w, 1)
    os.close(sdk_in_r)
    os.close(sdk_out_w)
    inbound = threading.Thread(
        target=_pump_in, args=(head, client_in, sdk_in_w), name="memcore-mcp-in", daemon=True
    )
    end = b"\x00memcore-mcp-end-" + os.urandom(8).hex().encode() + b"\n"
    outbound = threading.Thread(
        target=_pump_out, args=(sdk_out_r, client_out, early, end), name="memcore-mcp-out"
    )
    inbound.start()
    outbound.start()
    try:
        built["server"].run("stdio")
    finally:
        built["pool"].close()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        _write_all(1, end)  # after everything the SDK wrote
        os.dup2(saved_out, 1)
        os.dup2(saved_in, 0)
        os.close(saved_out)
        os.close(saved_in)
        outbound.join()
        os.close(client_out)
