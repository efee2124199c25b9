"""Consolidation of MEMORY.md: the dream cycle (promote, merge, reconcile, decay, forget),
its review queue, entry metadata and undo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.dream.cycle import (
        RESULT_KEYS,
        apply_plan,
        last_run_at,
        parse_steps,
        preview,
        run_cycle,
    )
    from memcore.dream.imports import apply_import, read_import
    from memcore.dream.plan import STEPS, Plan, build_plan
    from memcore.dream.setmeta import set_entry
    from memcore.dream.settings import ConsolidationSettings, consolidation_settings
    from memcore.dream.undo import reverse_text, undo_run

__all__ = [
    "RESULT_KEYS",
    "STEPS",
    "ConsolidationSettings",
    "Plan",
    "apply_import",
    "apply_plan",
    "build_plan",
    "consolidation_settings",
    "last_run_at",
    "parse_steps",
    "preview",
    "read_import",
    "reverse_text",
    "run_cycle",
    "set_entry",
    "undo_run",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "cycle": (
            "RESULT_KEYS",
            "apply_plan",
            "last_run_at",
            "parse_steps",
            "preview",
            "run_cycle",
        ),
        "imports": ("apply_import", "read_import"),
        "plan": ("STEPS", "Plan", "build_plan"),
        "setmeta": ("set_entry",),
        "settings": ("ConsolidationSettings", "consolidation_settings"),
        "undo": ("reverse_text", "undo_run"),
    },
)
