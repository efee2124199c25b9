"""Judging text: contradictions and unique details between entries, the extractive
summariser, and the optional model behind an OpenAI-compatible endpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.judge.contradict import (
        contradiction,
        details,
        topic,
        unique_content,
        unique_details,
    )
    from memcore.judge.extractive import answer
    from memcore.judge.llm import (
        LLM,
        Completion,
        ExtractiveLLM,
        OpenAICompatibleLLM,
        Usage,
        llm_settings,
        make_llm,
    )
    from memcore.judge.model_merge import configured_model, model_text

__all__ = [
    "LLM",
    "Completion",
    "ExtractiveLLM",
    "OpenAICompatibleLLM",
    "Usage",
    "answer",
    "configured_model",
    "contradiction",
    "details",
    "llm_settings",
    "make_llm",
    "model_text",
    "topic",
    "unique_content",
    "unique_details",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "contradict": ("contradiction", "details", "topic", "unique_content", "unique_details"),
        "extractive": ("answer",),
        "llm": (
            "LLM",
            "Completion",
            "ExtractiveLLM",
            "OpenAICompatibleLLM",
            "Usage",
            "llm_settings",
            "make_llm",
        ),
        "model_merge": ("configured_model", "model_text"),
    },
)
