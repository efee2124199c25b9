"""Pausing Python's cyclic garbage collector while a large acyclic structure is built.

Building 100,000 entries, rows or candidates allocates millions of objects; each allocation
burst triggers collections that rescan everything still alive, so the collector's work grows
with the square of what is built (half the parse time of a 100,000-entry store, and most of
the time spent building 100,000 candidates). Nothing built this way holds a cycle.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """The block runs with the cyclic collector paused (restored after, as it was)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                # What the block built and kept goes to the oldest generation at once (frozen,
                # then thawed into it): else the next young collection traverses all of it,
                # a third of a second after building 100,000 candidates. Skipped when some
                # other code keeps objects frozen (thawing would release them too).
                gc.freeze()
                gc.unfreeze()
            gc.enable()
