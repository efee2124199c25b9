"""A model judge over ``[llm]``: batched pairs, one strict JSON answer, validated item by item.

    judge = ModelJudge(make_llm(cfg), batch_size=8)
    judgements = judge_cached(judge, pairs, conn)

Each call sends up to ``batch_size`` pairs as one JSON document and asks for one JSON object
``{"judgements": [{"pair": 0, "verdict": "...", "reason": "...", "confidence": 0.9,
"newer": "a" | "b" | null, "merged_text": "..." | null}, ...]}``. Every item is checked:

* an unknown verdict, a missing or repeated pair number, a non-object item -> that pair is
  skipped with the reason;
* an answer that is not that JSON, an HTTP error, a timeout -> every pair of the batch is
  skipped with the reason (nothing is guessed; skipped pairs are asked again next run);
* ``newer`` must name one side for ``supersedes`` (else the later ``created_at`` is used);
* ``merged_text`` is kept only for ``same`` and only when it keeps every detail of both
  entries (:func:`memcore.judge.validate.missing_details`); otherwise it is dropped and the
  reason says so, so the merge waits for review.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memcore.errors import MemcoreError
from memcore.judge.analysis import Analyzer
from memcore.judge.llm import LLM
from memcore.judge.protocol import VERDICTS, EntryView, Judgement, Pair, Verdict
from memcore.judge.validate import missing_details

VERSION = "model-1"

SYSTEM_PROMPT = (
    "You judge pairs of entries from an AI coding agent's long-term memory. For each pair "
    "give exactly one verdict: 'same' (both state one fact; wording, language, abbreviation "
    "or an added compatible detail may differ), 'supersedes' (one replaces the other: a "
    "changed decision, an upgraded version, a moved port/path/host/owner; say which side is "
    "newer), 'conflict' (incompatible facts and nothing tells which is current), 'related' "
    "(same subject, both can be true: a qualifier such as an environment, component, "
    "platform, role, person, default vs maximum or a time window separates them, or they "
    "state different facts), 'unrelated' (different subjects). For 'same' you may write "
    "'merged_text': one entry that keeps every number, name, path, version and identifier "
    'of both. Answer with one JSON object: {"judgements": [{"pair": <number>, '
    '"verdict": <verdict>, "reason": <short reason>, "confidence": <0..1>, '
    '"newer": "a" | "b" | null, "merged_text": <text> | null}]}, one item per pair.'
)


def _entry(e: EntryView) -> dict[str, Any]:
    return {
        "text": e.text,
        "type": e.type,
        "scope": e.scope,
        "created": e.created_at[:10],
        "pinned": e.pinned,
    }


class ModelJudge:
    """A judge backed by a configured model (any :class:`memcore.judge.llm.LLM`)."""

    def __init__(
        self,
        llm: LLM,
        *,
        batch_size: int = 8,
        max_tokens: int = 1200,
        analyzer: Analyzer | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.llm = llm
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.analyzer = analyzer or Analyzer()
        self.judge_id = f"{VERSION}+{llm.name}"
        self.calls = 0

    def request(self, pairs: Sequence[Pair]) -> list[dict[str, str]]:
        """The chat messages for one batch."""
        doc = {
            "verdicts": list(VERDICTS),
            "pairs": [
                {"pair": n, "a": _entry(a), "b": _entry(b)} for n, (a, b) in enumerate(pairs)
            ],
        }
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps(doc, ensure_ascii=False)},
        ]

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        out: list[Judgement] = []
        for s in range(0, len(pairs), self.batch_size):
            out.extend(self._batch(pairs[s : s + self.batch_size]))
        return out

    def _batch(self, pairs: Sequence[Pair]) -> list[Judgement]:
        self.calls += 1
        try:
            answer = self.llm.complete(self.request(pairs), max_tokens=self.max_tokens)
        except MemcoreError as exc:
            kind = getattr(exc, "kind", "error")
            why = "model timed out" if kind == "timeout" else f"model call failed: {exc}"
            return [Judgement.skipped(why)] * len(pairs)
        try:
            doc = json.loads(answer.text)
        except ValueError:
            return [Judgement.skipped("model answered something that is not JSON")] * len(pairs)
        items = doc.get("judgements") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            return [Judgement.skipped("model answer has no 'judgements' list")] * len(pairs)
        by_pair: dict[int, Any] = {}
        repeated: set[int] = set()
        for item in items:
            n = item.get("pair") if isinstance(item, dict) else None
            if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < len(pairs):
                if n in by_pair:
                    repeated.add(n)
                by_pair[n] = item
        out = []
        for n, (a, b) in enumerate(pairs):
            if n in repeated:
                out.append(Judgement.skipped(f"model answered pair {n} twice"))
            elif n not in by_pair:
                out.append(Judgement.skipped(f"model left pair {n} out"))
            else:
                out.append(self._item(by_pair[n], a, b))
        return out

    def _item(self, item: dict[str, Any], a: EntryView, b: EntryView) -> Judgement:
        verdict = item.get("verdict")
        if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
            return Judgement.skipped(f"model gave an unknown verdict {verdict!r}")
        v = Verdict(verdict.strip().lower())
        reason = item.get("reason")
        reason = reason.strip()[:300] if isinstance(reason, str) and reason.strip() else "model"
        conf = item.get("confidence")
        confidence = (
            min(1.0, max(0.0, float(conf)))
            if isinstance(conf, int | float) and not isinstance(conf, bool)
            else 0.5
        )
        newer = None
        if v in (Verdict.SUPERSEDES, Verdict.CONFLICT):
            side = item.get("newer")
            newer = {"a": a.id, "b": b.id, a.id: a.id, b.id: b.id}.get(str(side))
            if newer is None and v is Verdict.SUPERSEDES:
                if a.created_at[:10] == b.created_at[:10]:
                    return Judgement.skipped("model said supersedes without naming the newer entry")
                newer = a.id if a.created_at > b.created_at else b.id
        merged = None
        text = item.get("merged_text")
        if v is Verdict.SAME and isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            lost = missing_details([a.text, b.text], text, self.analyzer)
            if lost:
                reason += f" (merged text rejected: it drops {', '.join(lost[:3])})"
            else:
                merged = text
        return Judgement(v, reason, round(confidence, 3), newer, merged)
