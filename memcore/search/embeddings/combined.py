"""Query vectors of searches that run at the same time, computed in one model call.

A model backend's cost for one short query is mostly fixed overhead per call (the weight
matrices are streamed through the CPU whatever the batch), so a server answering many searches
at once spends most of its time embedding queries one by one. :func:`embed_query` lets
concurrent callers share calls: the first caller computes the vectors of every query waiting at
that moment in one ``embed`` call (a flat batch), the others take their row; whoever arrives
while a call runs waits for the next one, led by the first of them. A caller alone pays one
call, as before.

Each query's vector is its own row of a flat batch (the model keeps sentences apart), equal to
embedding it alone up to float rounding (about 1e-7).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from memcore.search.embeddings import Embedder

#: At most this many queries go into one call (bounds the latency one call adds to a batch).
MAX_QUERIES = 64


@dataclass
class _Slot:
    text: str
    done: threading.Event = field(default_factory=threading.Event)
    vector: np.ndarray | None = None
    error: BaseException | None = None
    lead: bool = False  # woken to run the next call rather than with a vector


@dataclass
class _Queue:
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiting: list[_Slot] = field(default_factory=list)
    busy: bool = False


_queues: dict[str, _Queue] = {}
_queues_lock = threading.Lock()


def _queue_for(embedder: Embedder) -> _Queue:
    key = f"{type(embedder).__qualname__}:{embedder.id}:{id(embedder)}"
    with _queues_lock:
        q = _queues.get(key)
        if q is None:
            q = _queues[key] = _Queue()
        return q


def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    """The model vector (float32, ``embedder.dim``) of one query, shared with the queries
    other threads embed at the same time (see module doc). Raises what ``embed`` raises."""
    q = _queue_for(embedder)
    slot = _Slot(text)
    with q.lock:
        q.waiting.append(slot)
        lead = not q.busy
        q.busy = True
    if not lead:
        slot.done.wait()
        if not slot.lead:
            return _result(slot)
    _run_one_call(embedder, q)
    return _result(slot)


def _result(slot: _Slot) -> np.ndarray:
    if slot.error is not None:
        raise slot.error
    assert slot.vector is not None
    return slot.vector


def _run_one_call(embedder: Embedder, q: _Queue) -> None:
    """Embed the waiting queries (the leader's among them) in one call, hand each its row,
    and pass the lead to the first query that arrived meanwhile (or free the queue)."""
    import numpy as np

    with q.lock:
        batch, q.waiting = q.waiting[:MAX_QUERIES], q.waiting[MAX_QUERIES:]
    try:
        vectors = np.asarray(embedder.embed([s.text for s in batch]), dtype=np.float32)
    except BaseException as exc:  # every caller of this call gets the same error
        for s in batch:
            s.error = exc
    else:
        for i, s in enumerate(batch):
            s.vector = vectors[i]
    with q.lock:
        nxt = q.waiting[0] if q.waiting else None
        if nxt is None:
            q.busy = False
        else:
            nxt.lead = True
    for s in batch:
        s.lead = False
        s.done.set()
    if nxt is not None:
        nxt.done.set()
