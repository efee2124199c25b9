"""Every exception memcore raises, in one tree.

The library raises these; the faces turn them into one line for the user. Each class says how:
``exit_code`` is what the ``memcore`` command exits with, ``http_status`` what the gateway
answers with (the body is ``{"error": message}``); the MCP server returns the message as a
tool error. Subclasses inherit both unless they say otherwise.

::

    MemcoreError ............ exit 1   HTTP 422  base of every error reported to a user
    ├── ConfigError ......... exit 1   HTTP 422  a configuration file or value is invalid
    ├── WorkspaceError ...... exit 1   HTTP 422  the workspace or one of its files is unusable
    │   └── Unreadable ...... exit 1   HTTP 422  a file memcore refuses to read (link out, FIFO…)
    ├── StoreError .......... exit 1   HTTP 422  the recall store cannot be read or written
    │   └── StoreCorrupt .... exit 1   HTTP 422  a preview found a store that does not parse
    ├── DatabaseError ....... exit 1   HTTP 503  memcore.sqlite is unusable right now
    │   └── DatabaseLocked .. exit 75  HTTP 409  another process holds memcore.sqlite
    ├── InputError .......... exit 1   HTTP 400  a selector, id, path or stdin is not usable
    │   ├── AmbiguousSelector exit 1   HTTP 400  a selector matches several entries
    │   ├── UnknownWorkspace  exit 1   HTTP 404  the gateway does not serve that workspace
    │   ├── StalePlan ....... exit 1   HTTP 409  MEMORY.md changed between plan and apply
    │   ├── LossBoundExceeded exit 1   HTTP 400  a run would remove too much of MEMORY.md
    │   ├── UndoConflict .... exit 1   HTTP 409  a later edit conflicts with an undo
    │   └── UnsupportedFormat exit 1   HTTP 400  a transcript in a format memcore does not read
    ├── LockBusy ............ exit 75  HTTP 409  another process holds the workspace lock
    ├── Busy ................ exit 75  HTTP 409  a gateway run of this workspace is in progress
    ├── PortInUse ........... exit 1   HTTP 500  the gateway's address cannot be bound
    ├── LLMError ............ exit 1   HTTP 502  a model call failed
    ├── BadAnswer ........... exit 1   HTTP 502  a model's answer failed validation
    ├── BudgetExhausted ..... exit 1   HTTP 429  today's token budget is spent
    ├── LeaseLost ........... exit 1   HTTP 409  another session dream took the lease over
    ├── SourceChanged ....... exit 1   HTTP 409  a session source changed under the run
    └── RunStopped .......... exit 1   HTTP 409  a session dream was stopped (signal, stop)

    Signals (not errors; never shown to a user as such):
    JobSkipped .............. a scheduled job records its slot as done without work
    HTTPProblem ............. the gateway answers with its own status and message

75 is ``EX_TEMPFAIL`` from sysexits.h: try again later. Usage errors (a bad option or
argument) are not here: click reports them and exits 2.
"""

from __future__ import annotations

from typing import Any


class MemcoreError(Exception):
    """Base class for every error memcore reports to a user."""

    exit_code: int = 1
    http_status: int = 422


class ConfigError(MemcoreError):
    """A configuration file or value is invalid (names file, key, value, what is allowed)."""


class WorkspaceError(MemcoreError):
    """The workspace or one of its files cannot be used."""


class Unreadable(WorkspaceError):
    """A workspace file memcore refuses to read (a symlink leading out, a FIFO, socket or
    device, a file over the size cap); ``reason`` is the short why, without the path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreError(MemcoreError):
    """The recall store cannot be read or written."""


class StoreCorrupt(StoreError):
    """A preview found a store that does not parse; it is left for a writing command."""


class DatabaseError(MemcoreError):
    """memcore.sqlite cannot be used right now: read-only, disk full, I/O error (never a
    reason to move the file; only real corruption is)."""

    http_status = 503


class DatabaseLocked(DatabaseError):
    """Another process holds memcore.sqlite past the busy timeout."""

    exit_code = 75
    http_status = 409


class InputError(MemcoreError):
    """Input given to a command (stdin, a selector, an id) is not what it expects."""

    http_status = 400


class AmbiguousSelector(InputError):
    """A selector matches more than one entry; ``matches`` lists them (the caller picks one)."""

    def __init__(self, message: str, matches: list[str]) -> None:
        super().__init__(message)
        self.matches = matches


class UnknownWorkspace(InputError):
    """A request named a workspace the gateway does not serve."""

    http_status = 404


class StalePlan(InputError):
    """MEMORY.md changed between the plan and its application; nothing was applied."""

    http_status = 409


class LossBoundExceeded(InputError):
    """A run would remove or rewrite more of MEMORY.md than ``max_loss_fraction`` allows;
    ``affected`` names the entries."""

    def __init__(self, message: str, affected: list[str]) -> None:
        super().__init__(message)
        self.affected = affected


class UndoConflict(InputError):
    """A later edit conflicts with the undo; nothing was changed."""

    http_status = 409


class UnsupportedFormat(InputError):
    """A readable JSON Lines transcript in a format memcore does not read (yet); ``guess``
    names what it looks like."""

    def __init__(self, message: str, guess: str = "unknown") -> None:
        super().__init__(message)
        self.guess = guess


class LockBusy(MemcoreError):
    """Another process holds the workspace lock past the timeout."""

    exit_code = 75
    http_status = 409


class Busy(MemcoreError):
    """A gateway run of this workspace is already in progress."""

    exit_code = 75
    http_status = 409


class PortInUse(MemcoreError):
    """The gateway's address cannot be bound (the message says what to do)."""

    http_status = 500


class LLMError(MemcoreError):
    """A model call failed (HTTP error, timeout, connection, malformed answer)."""

    http_status = 502

    def __init__(self, message: str, *, kind: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class BadAnswer(MemcoreError):
    """The model's answer failed validation; nothing was written."""

    http_status = 502


class BudgetExhausted(MemcoreError):
    """The next call does not fit today's token budget; it waits for tomorrow (00:00 UTC)."""

    http_status = 429


class LeaseLost(MemcoreError):
    """Another run took the lease over (ours expired); this run must stop writing."""

    http_status = 409


class SourceChanged(MemcoreError):
    """A source changed under the run; its publication was abandoned (it stays queued)."""

    http_status = 409


class RunStopped(MemcoreError):
    """A session dream was asked to stop (SIGTERM, a gateway stop, ``sessions stop``); what
    it had published stays, the rest is queued for the next run."""

    http_status = 409


# -- signals ------------------------------------------------------------------------------


class JobSkipped(Exception):
    """Raised by a scheduled job's ``run`` to record the slot as done without doing anything."""

    def __init__(self, reason: str, result: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.result = result or {}


class HTTPProblem(Exception):
    """A gateway answer with a status code and a one-line message (``{"error": ...}``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_class(name: str) -> type[MemcoreError] | None:
    """The MemcoreError subclass called ``name`` (a job outcome stores only the class name)."""
    found = globals().get(name)
    if isinstance(found, type) and issubclass(found, MemcoreError):
        return found
    return None
