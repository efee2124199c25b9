"""Progress of long library calls (index build, embedding, session dreaming).

The library never prints: a call that can take more than a second takes an optional
``progress`` callback and calls it as ``progress(label, done, total)`` after each unit of work
(``done`` of ``total`` files, texts or sessions of the step named ``label``). A face decides
whether and how to show it (the CLI draws a bar on a terminal's stderr).
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, int], None]


def report(progress: Progress | None, label: str, done: int, total: int) -> None:
    """Call ``progress`` if there is one (so call sites stay one line)."""
    if progress is not None:
        progress(label, done, total)
