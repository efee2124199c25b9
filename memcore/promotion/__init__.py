"""Promotion into MEMORY.md: ranking recalls, appending the best, the ``/dreaming`` command
and its status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.promotion.commands import handle_dreaming
    from memcore.promotion.promote import TITLE, PromoteResult, apply, explain, preview
    from memcore.promotion.status import dreaming_status

__all__ = [
    "TITLE",
    "PromoteResult",
    "apply",
    "dreaming_status",
    "explain",
    "handle_dreaming",
    "preview",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "commands": ("handle_dreaming",),
        "promote": ("TITLE", "PromoteResult", "apply", "explain", "preview"),
        "status": ("dreaming_status",),
    },
)
