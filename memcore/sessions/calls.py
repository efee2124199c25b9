"""One model call with its budget bookkeeping: pack sources under the per-call caps, reserve,
call, settle, renew the lease, validate the answer.

The size of a call is the byte count of the request body the model receives: packing
estimates it with everything that is sent (system prompt, current memory, sources, the
health block, ``response_format``), and the reservation is that same size plus the output
ceiling."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcore.errors import BadAnswer, LLMError, RunStopped
from memcore.judge.llm import LLM
from memcore.sessions import budget as bud
from memcore.sessions.lease import Lease
from memcore.sessions.prompts import (
    RequestSource,
    answer_decisions,
    build_messages,
    max_output_tokens,
    request_bytes,
    validate_answer,
)


@dataclass
class CallStats:
    calls: int = 0
    reserved: int = 0
    charged: int = 0
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    no_usage: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Caller:
    conn: sqlite3.Connection  # the user ledger: one daily budget for every workspace
    llm: LLM
    lease: Lease
    clock: Callable[[], datetime]
    daily_budget: int
    run_id: str
    workspace: str = ""  # charged to the ledger with each call
    leases: list[Lease] = field(default_factory=list)  # renewed with ``lease`` after a call
    should_stop: Callable[[], None] | None = None  # raises RunStopped before/after a call
    stop_event: Any = None  # a control.StopEvent: told when a model call is in flight
    stats: CallStats = field(default_factory=CallStats)
    accepted: int = 0  # answers that passed validation
    rejected: list[str] = field(default_factory=list)  # why each rejected answer was rejected
    checked: list[dict[str, str]] = field(default_factory=list)  # what the checks removed
    decisions: list[tuple[str, str]] = field(default_factory=list)  # the last answer's claims

    def pack(
        self,
        task: str,
        limit: int,
        current_ref: str | None,
        current_text: str,
        sources: list[RequestSource],
        health: dict[str, Any] | None = None,
    ) -> list[list[RequestSource]]:
        """Split ``sources`` into calls of at most 24 sources and 16,000 estimated input tokens,
        counting the ``health`` block the calls will carry."""
        batches: list[list[RequestSource]] = []
        rest = sources
        while rest:
            batch = self.next_batch(task, limit, current_ref, current_text, rest, health)
            batches.append(batch)
            rest = rest[len(batch) :]
        return batches

    def next_batch(
        self,
        task: str,
        limit: int,
        current_ref: str | None,
        current_text: str,
        sources: list[RequestSource],
        health: dict[str, Any] | None = None,
    ) -> list[RequestSource]:
        """The first call's worth of ``sources`` (``pack`` stopped after one batch)."""
        batch: list[RequestSource] = []
        for src in sources:
            trial = [*batch, src]
            if batch and (
                len(trial) > bud.MAX_SOURCES_PER_CALL
                or self.estimate(task, limit, current_ref, current_text, trial, health)
                > bud.MAX_INPUT_TOKENS
            ):
                break
            batch = trial
        return batch

    def estimate(
        self,
        task: str,
        limit: int,
        current_ref: str | None,
        current_text: str,
        sources: list[RequestSource],
        health: dict[str, Any] | None = None,
    ) -> int:
        """Bytes of the request these sources would make, exactly as it would be sent."""
        msgs = build_messages(task, limit, current_ref, current_text, sources, health)
        return self.request_size(msgs, max_output_tokens(limit))

    def request_size(self, messages: list[dict[str, str]], max_tokens: int) -> int:
        """The body's byte count: the adapter's own serialisation when it has one."""
        body = getattr(self.llm, "request_body", None)
        if callable(body):
            data = body(messages, max_tokens=max_tokens)
            if isinstance(data, bytes):
                return len(data)
        return request_bytes(messages, max_tokens, self.llm.name)

    def run(
        self,
        task: str,
        limit: int,
        current_ref: str | None,
        current_text: str,
        sources: list[RequestSource],
        health: dict[str, Any] | None = None,
    ) -> tuple[str, list[str]]:
        """Call the model once; the validated memory text and used source ids.
        Raises BudgetExhausted, LLMError, LeaseLost or BadAnswer."""
        messages = build_messages(task, limit, current_ref, current_text, sources, health)
        max_out = max_output_tokens(limit)
        if health and self.request_size(messages, max_out) > bud.MAX_INPUT_TOKENS:
            # one source that alone fills the call: it goes without the health block
            messages = build_messages(task, limit, current_ref, current_text, sources)
        if self.should_stop is not None:
            self.should_stop()
        call_id = None
        if self.llm.metered:
            amount = self.request_size(messages, max_out) + max_out
            call_id = bud.reserve(
                self.conn,
                budget=self.daily_budget,
                amount=amount,
                now=self.clock(),
                run_id=self.run_id,
                model=self.llm.name,
                workspace=self.workspace,
            )
            self.stats.reserved += amount
        self.stats.calls += 1
        try:
            if self.stop_event is not None:
                self.stop_event.in_call = True
            try:
                completion = self.llm.complete(messages, max_tokens=max_out)
            finally:
                if self.stop_event is not None:
                    self.stop_event.in_call = False
        except (LLMError, RunStopped, KeyboardInterrupt):
            if call_id is not None:
                bud.cancel(self.conn, call_id, self.clock())
            raise
        if call_id is not None:
            self.stats.charged += bud.settle(self.conn, call_id, completion.usage, self.clock())
        if self.should_stop is not None:
            self.should_stop()  # an answer that arrives after a stop is never published
        if completion.usage is not None:
            self.stats.prompt += completion.usage.prompt
            self.stats.completion += completion.usage.completion
            self.stats.cached += completion.usage.cached
        elif self.llm.metered:
            self.stats.no_usage += 1
        self.lease.renew(self.clock())
        for extra in self.leases:
            extra.renew(self.clock())
        try:
            transcript = [s.text for s in sources if s.kind in ("messages", "raw")]
            memory, used, changes = validate_answer(
                completion.text, limit, {s.id for s in sources}, transcript
            )
        except BadAnswer as exc:
            self.rejected.append(str(exc))
            raise
        self.accepted += 1
        self.checked += [{"task": task, "reason": c.reason, "text": c.text} for c in changes]
        self.decisions = answer_decisions(completion.text) if task == "session" else []
        return memory, used
