"""Request checks of the gateway: Host and Origin, bearer token, JSON bodies.

A web page on another origin can send a "simple" POST (``text/plain``) to a localhost port
without a CORS preflight, and DNS rebinding lets a foreign name resolve to 127.0.0.1. So every
request must carry one of the gateway's own Host names (and port), a present Origin must be
the gateway's own, and every mutating route needs ``Content-Type: application/json`` (which
forces a preflight that the gateway never grants) plus the bearer token.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from memcore.errors import ConfigError, HTTPProblem

DEFAULT_MAX_BODY = 64 * 1024
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def new_token() -> str:
    return secrets.token_urlsafe(24)


TOKEN_FILE = "gateway.token"


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """The token kept in ``path`` (mode 0600), creating it with a new token when missing.

    Returns (token, created). A token file that others may read (group or other permission
    bits), that is not a regular file or that is empty is refused with what to do: the file
    replaces printing the token in the gateway's log, which other users may read.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path} must be a regular file holding the gateway token")
        if st.st_mode & 0o077:
            raise ConfigError(
                f"{path} may be read by other users (mode {stat.S_IMODE(st.st_mode):04o}); "
                f"run: chmod 600 {path}"
            )
        token = path.read_text(encoding="utf-8").strip()
        if not token:
            raise ConfigError(f"{path} is empty; delete it to get a new token")
        return token, False
    token = new_token()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return token, True


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None]:
    """``"127.0.0.1:8787"`` → ("127.0.0.1", 8787); ``"[::1]:80"`` → ("::1", 80)."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        host, _, port = value.partition(":")
    else:
        host, port = value, ""
    if port and not port.isdigit():
        return host, -1
    return host, int(port) if port else None


@dataclass
class Guard:
    """The gateway's own names and its token."""

    token: str
    bind_host: str = "127.0.0.1"
    extra_hosts: tuple[str, ...] = ()
    max_body: int = DEFAULT_MAX_BODY
    embed_token: bool = True  # False: the page never carries the token (--no-embed-token)
    read_token: bool = False  # True: GET routes with memory text need the token (--read-token)
    names: set[str] = field(init=False)

    def __post_init__(self) -> None:
        names = {self.bind_host.lower().strip("[]"), *(h.lower() for h in self.extra_hosts)}
        if is_loopback(self.bind_host) or self.bind_host in ("0.0.0.0", "::"):
            names.update(LOOPBACK_NAMES)
        self.names = names

    def own_host(self, host_header: str | None, port: int | None) -> bool:
        if not host_header:
            return False
        host, hport = split_host(host_header)
        if host not in self.names:
            return False
        return port is None or hport == port or (hport is None and port == 80)

    def check_host_origin(self, request: Request) -> None:
        port = _server_port(request)
        if not self.own_host(request.headers.get("host"), port):
            raise HTTPProblem(403, f"Host {request.headers.get('host')!r} is not this gateway's")
        origin = request.headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not self.own_host(parts.netloc, port):
                raise HTTPProblem(403, f"Origin {origin!r} is not this gateway's")

    def check_token(self, request: Request) -> None:
        auth = request.headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value:
            raise HTTPProblem(401, "missing bearer token (Authorization: Bearer <token>)")
        if not hmac.compare_digest(value.strip().encode(), self.token.encode()):
            raise HTTPProblem(401, "wrong bearer token")

    def check_read(self, request: Request) -> None:
        """In read-token mode, a GET route that returns memory text needs the token too."""
        if self.read_token:
            self.check_token(request)

    async def check_mutation(self, request: Request) -> None:
        """Token and content type of a mutating request (Host/Origin already checked)."""
        self.check_token(request)
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HTTPProblem(415, "Content-Type must be application/json")

    def page_may_embed_token(self, request: Request) -> bool:
        """Embed the token in the page only for a top-level load from this machine.

        Host is already the gateway's own (no rebinding); the client must be on loopback, and a
        browser that says the load was started by another site (``Sec-Fetch-Site``) gets no
        token. The page also forbids framing, so no foreign page can click its buttons.
        """
        if not self.embed_token or self.read_token:
            return False  # in read-token mode the page asks for the token instead
        client = request.client.host if request.client else ""
        if not is_loopback(client):
            return False
        site = request.headers.get("sec-fetch-site")
        return site in (None, "none", "same-origin")


def _server_port(request: Request) -> int | None:
    server = request.scope.get("server")
    return int(server[1]) if server and server[1] is not None else None


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing more than ``limit`` bytes (413) before reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise HTTPProblem(400, "invalid Content-Length")
        if int(declared) > limit:
            raise HTTPProblem(413, f"request body too large (limit {limit} bytes)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPProblem(413, f"request body too large (limit {limit} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


#: field -> (python types, required); bool is never accepted where int is asked.
Schema = dict[str, tuple[tuple[type, ...], bool]]


async def read_json(request: Request, schema: Schema, limit: int) -> dict[str, Any]:
    """Parse and check a JSON object body: unknown fields, missing fields, wrong types → 400."""
    raw = await read_body(request, limit)
    if not raw.strip():
        data: Any = {}
    else:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HTTPProblem(400, f"body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HTTPProblem(400, f"body must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(schema))
    if unknown:
        raise HTTPProblem(
            400, f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(schema) or 'none'}"
        )
    for name, (types, required) in schema.items():
        if name not in data:
            if required:
                raise HTTPProblem(400, f"missing field {name!r}")
            continue
        value = data[name]
        if isinstance(value, str) and not _encodable(value):
            raise HTTPProblem(400, f"field {name!r} contains a lone surrogate; send UTF-8 text")
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not ok:
            want = " or ".join(_type_name(t) for t in types)
            raise HTTPProblem(400, f"field {name!r} must be {want}, got {json.dumps(value)[:60]}")
    return data


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _type_name(t: type) -> str:
    return {
        str: "a string",
        int: "an integer",
        bool: "a boolean",
        float: "a number",
        type(None): "null",
    }.get(t, t.__name__)
