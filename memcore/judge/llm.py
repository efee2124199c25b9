"""Model providers behind one small protocol.

Two providers: the offline extractive default (deterministic, no network, free) and an
OpenAI-compatible Chat Completions adapter over stdlib ``urllib`` (hosted APIs and local
servers such as Ollama, llama.cpp or vLLM). Callers send a system prompt and a user message
that is one JSON document; both providers answer one JSON document as text, which the caller
validates before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, runtime_checkable

from memcore.errors import ConfigError, LLMError
from memcore.workspace.config import Config, get_choice, get_number, get_str

PROVIDERS = ("extractive", "openai")
EXTRACTIVE_NAME = "extractive"


@dataclass(frozen=True)
class Usage:
    """Token usage as the provider reports it (``cached`` is part of ``prompt``)."""

    prompt: int
    completion: int
    cached: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage | None
    model: str


@runtime_checkable
class LLM(Protocol):
    """What memcore needs from a model: messages in, one text answer and its usage out."""

    name: str
    metered: bool  # True when calls cost tokens and count against the daily budget

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion: ...


# -- settings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LLMSettings:
    """The resolved ``[llm]`` table."""

    provider: str = "extractive"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0


def llm_settings(cfg: Config) -> LLMSettings:
    """Resolve ``[llm]``; the provider defaults to ``openai`` when ``base_url`` is set."""
    t = "llm"
    base_url = get_str(cfg, t, "base_url", None)
    if base_url is not None and not re.match(r"^https?://", base_url):
        raise ConfigError(
            f"{cfg.where(t, 'base_url')} = {base_url!r} must start with http:// or https://"
        )
    provider = get_choice(cfg, t, "provider", "openai" if base_url else "extractive", PROVIDERS)
    model = get_str(cfg, t, "model", None)
    if provider == "openai" and base_url is None:
        raise ConfigError(f"{cfg.where(t, 'base_url')} is required when provider = 'openai'")
    api_key_env = get_str(cfg, t, "api_key_env", "OPENAI_API_KEY") or "OPENAI_API_KEY"
    timeout = get_number(cfg, t, "timeout", 60.0, lo=1, hi=600)
    return LLMSettings(provider, base_url, model, api_key_env, timeout)


def make_llm(cfg: Config, model: str | None = None) -> LLM:
    """The configured model. ``model`` overrides ``[llm] model``; ``"extractive"`` forces the
    offline provider."""
    settings = llm_settings(cfg)
    if model == EXTRACTIVE_NAME or (settings.provider == "extractive" and not model):
        return ExtractiveLLM()
    if settings.provider == "extractive" or settings.base_url is None:
        raise ConfigError(
            f"{cfg.path.name}: model {model!r} needs [llm] base_url (an OpenAI-compatible endpoint)"
        )
    name = model or settings.model
    if not name:
        raise ConfigError(f"{cfg.where('llm', 'model')} is required for the openai provider")
    return OpenAICompatibleLLM(
        settings.base_url,
        name,
        api_key=os.environ.get(settings.api_key_env) or None,
        timeout=settings.timeout,
    )


# -- OpenAI-compatible adapter ----------------------------------------------------------


class OpenAICompatibleLLM:
    """``POST {base_url}/chat/completions`` with JSON mode, on stdlib urllib. No retries:
    a failed call fails the run, and the caller's backoff decides when to try again."""

    metered = True

    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.api_key = api_key
        self.timeout = timeout

    def request_body(self, messages: list[dict[str, str]], *, max_tokens: int) -> bytes:
        """The serialised request; its length is the budget's input estimate."""
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion:
        data = self.request_body(messages, max_tokens=max_tokens)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            self.base_url + "/chat/completions", data=data, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc)
            raise LLMError(
                f"model endpoint answered HTTP {exc.code}{': ' + detail if detail else ''}",
                kind="http",
                status=exc.code,
            ) from None
        except TimeoutError:
            raise LLMError(
                f"model endpoint timed out after {self.timeout:g}s", kind="timeout"
            ) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                raise LLMError(
                    f"model endpoint timed out after {self.timeout:g}s", kind="timeout"
                ) from None
            raise LLMError(
                f"cannot reach model endpoint {self.base_url}: {exc.reason}", kind="connection"
            ) from None
        except (ConnectionError, OSError) as exc:
            raise LLMError(
                f"connection to model endpoint failed: {exc}", kind="connection"
            ) from None
        return parse_chat_response(raw, self.model)


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read(4096).decode("utf-8", "replace")
    except Exception:
        return ""
    try:
        doc = json.loads(body)
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict) and isinstance(message := err.get("message"), str):
            return message[:300]
        if isinstance(err, str):
            return err[:300]
    except ValueError:
        pass
    return body.strip()[:300]


def parse_chat_response(raw: bytes, model: str) -> Completion:
    """Text and usage of a ``chat.completion`` body; LLMError(kind="malformed") otherwise."""
    try:
        doc = json.loads(raw)
    except ValueError:
        raise LLMError(
            "model endpoint answered something that is not JSON", kind="malformed"
        ) from None
    try:
        message = doc["choices"][0]["message"]
        text = message["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError("model answer has no choices[0].message.content", kind="malformed") from None
    if not isinstance(text, str):
        raise LLMError("model answer content is not text", kind="malformed")
    return Completion(text, _usage(doc.get("usage")), str(doc.get("model") or model))


def _token_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt, completion = raw.get("prompt_tokens"), raw.get("completion_tokens")
    if not (_token_count(prompt) and _token_count(completion)):
        return None
    cached = 0
    details = raw.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        cached = max(0, details["cached_tokens"])
    return Usage(prompt, completion, cached)


# -- the offline extractive default -----------------------------------------------------


class ExtractiveLLM:
    """Deterministic offline "model": reads the JSON request, keeps the existing memory's
    lines that no newer line replaces, adds decision / convention / preference / quirk /
    lesson sentences from the sources, drops chatter and fits the character limit."""

    name = EXTRACTIVE_NAME
    metered = False

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion:
        from memcore.judge.extractive import answer

        try:
            request = json.loads(messages[-1]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError("extractive model needs a JSON request", kind="malformed") from None
        text = json.dumps(answer(request), ensure_ascii=False)
        return Completion(text, None, self.name)
