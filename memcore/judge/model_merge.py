"""Merged text from a configured model, for merges that would otherwise lose a detail.

Only a real model counts (``[llm]`` with an OpenAI-compatible endpoint); the offline
extractive default does not. The model's answer is accepted only when it still holds every
detail (number, name, path, version, identifier) of every merged entry; otherwise the merge
keeps the deterministic combined text and waits for review.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from memcore.errors import MemcoreError
from memcore.judge.contradict import unique_details
from memcore.workspace.core import Workspace

log = logging.getLogger("memcore.dream")

SYSTEM_PROMPT = (
    "You merge near-duplicate entries of an AI agent's long-term memory into one entry. "
    "Write one concise sentence or two in the style of the first entry. Keep every number, "
    "name, path, version and identifier from every entry; add nothing that is not in them. "
    'Answer with one JSON object: {"text": "<the merged entry>"}.'
)


def configured_model(ws: Workspace) -> Any | None:
    """The configured model, or None when only the offline default is configured."""
    from memcore.judge.llm import llm_settings, make_llm
    from memcore.workspace.config import load_config

    try:
        cfg = load_config(ws)
        if llm_settings(cfg).provider == "extractive":
            return None
        return make_llm(cfg)
    except MemcoreError as exc:
        log.warning("no model for merges: %s", exc)
        return None


def model_text(llm: Any, keeper: str, absorbed: Sequence[str]) -> str | None:
    """The model's merged text when it keeps every detail, else None (never raises)."""
    payload = json.dumps({"entries": [keeper, *absorbed]}, ensure_ascii=False)
    try:
        answer = llm.complete(
            [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": payload}],
            max_tokens=400,
        )
        doc = json.loads(answer.text)
        text = doc.get("text") if isinstance(doc, dict) else None
    except (MemcoreError, ValueError, AttributeError) as exc:
        log.warning("model merge failed, the merge waits for review: %s", exc)
        return None
    if not isinstance(text, str) or not text.strip():
        return None
    text = " ".join(text.split())
    for source in (keeper, *absorbed):
        if unique_details(source, text):
            return None  # the model dropped a detail
    return text
