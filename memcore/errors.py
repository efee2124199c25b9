"""Domain exceptions. The library raises these; the CLI and gateway turn them into
one-line messages and exit codes."""


class MemcoreError(Exception):
    """Base class for every error memcore reports to a user."""

    exit_code = 1


class ConfigError(MemcoreError):
    """A configuration file or value is invalid (names file, key, value, what is allowed)."""


class WorkspaceError(MemcoreError):
    """The workspace or one of its files cannot be used."""


class LockBusy(MemcoreError):
    """Another process holds the workspace lock past the timeout."""

    exit_code = 75


class StoreError(MemcoreError):
    """The recall store cannot be read or written."""


class InputError(MemcoreError):
    """Input given to a command (stdin, a selector, an id) is not what it expects."""


class DatabaseError(MemcoreError):
    """memcore.sqlite cannot be used right now: read-only, disk full, I/O error (never a
    reason to move the file; only real corruption is)."""


class DatabaseLocked(DatabaseError):
    """Another process holds memcore.sqlite past the busy timeout."""

    exit_code = 75
