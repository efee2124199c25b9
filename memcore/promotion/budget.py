"""The MEMORY.md size budget, ``[memory] budget_chars`` (default 20,000 characters).

Every write path holds it: promotion adds entries best first while they fit and holds back
the rest (and says which); a run that would leave MEMORY.md over the budget and larger than
it was is refused. A MEMORY.md already over the budget is reported, never cut.
"""

from __future__ import annotations

from memcore.errors import InputError
from memcore.workspace.config import get_number, load_config
from memcore.workspace.core import Workspace

DEFAULT_BUDGET_CHARS = 20_000


def budget_chars(ws: Workspace) -> int:
    """``[memory] budget_chars`` (1,000 to 100,000,000; default 20,000)."""
    return int(
        get_number(
            load_config(ws),
            "memory",
            "budget_chars",
            DEFAULT_BUDGET_CHARS,
            lo=1000,
            hi=100_000_000,
            integer=True,
        )
    )


def over_budget_error(size: int, budget: int, what: str = "nothing was promoted") -> InputError:
    return InputError(
        f"MEMORY.md is {size} characters, over [memory] budget_chars = {budget}; {what}. "
        f"Allowed: budget_chars of at least {size}, or fewer entries (memcore dream merges and "
        "forgets)"
    )


def check_growth(before: str, after: str, budget: int) -> None:
    """Refuse a run that leaves MEMORY.md over ``budget`` and larger than it was."""
    if len(after) > budget and len(after) > len(before):
        raise InputError(
            f"this run would make MEMORY.md {len(after)} characters, over [memory] "
            f"budget_chars = {budget} (it is {len(before)} now); nothing was applied. "
            "Allowed: a larger budget_chars, or fewer entries"
        )
