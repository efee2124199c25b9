"""The LLM protocol: the extractive default and the OpenAI-compatible adapter against a real
local Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import json
import socket

import pytest

from memcore.errors import ConfigError, LLMError
from memcore.judge.llm import LLM, ExtractiveLLM, OpenAICompatibleLLM, Usage, llm_settings, make_llm
from memcore.sessions.prompts import RequestSource, build_messages
from memcore.workspace.config import load_config
from tests.chat_server import Reply, chat_server

MESSAGES = [
    {"role": "system", "content": "answer JSON"},
    {"role": "user", "content": '{"task": "session"}'},
]


def request(sources: list[str], current: str = "", limit: int = 1200) -> list[dict[str, str]]:
    srcs = [
        RequestSource(f"s{i + 1}", "messages", f"session:x#{i}-{i}", t)
        for i, t in enumerate(sources)
    ]
    return build_messages("session", limit, None, current, srcs)


def test_adapter_sends_chat_completions_request_and_reads_usage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with chat_server() as srv:
        srv.push(
            Reply(
                content='{"memory": "- a", "used": []}',
                usage={
                    "prompt_tokens": 120,
                    "completion_tokens": 30,
                    "total_tokens": 150,
                    "prompt_tokens_details": {"cached_tokens": 40},
                },
            )
        )
        llm = OpenAICompatibleLLM(srv.url, "test-model", api_key="k-123", timeout=5)
        out = llm.complete(MESSAGES, max_tokens=99)
    assert out.text == '{"memory": "- a", "used": []}'
    assert out.usage == Usage(120, 30, 40)
    assert out.usage.total == 150
    req = srv.requests[0]
    assert req["model"] == "test-model"
    assert req["messages"] == MESSAGES
    assert req["max_tokens"] == 99
    assert req["response_format"] == {"type": "json_object"}
    assert srv.headers[0]["authorization"] == "Bearer k-123"
    assert isinstance(llm, LLM) and llm.metered


@pytest.mark.parametrize("status", [400, 401, 429, 500, 503])
def test_adapter_http_errors_name_status_and_detail(status: int) -> None:
    with chat_server() as srv:
        srv.push(
            Reply(status=status, body=json.dumps({"error": {"message": f"boom {status}"}}).encode())
        )
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=5)
        with pytest.raises(LLMError) as exc:
            llm.complete(MESSAGES, max_tokens=10)
    assert exc.value.kind == "http"
    assert exc.value.status == status
    assert f"HTTP {status}" in str(exc.value) and f"boom {status}" in str(exc.value)


def test_adapter_timeout() -> None:
    with chat_server() as srv:
        srv.push(Reply(delay=1.5))
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=0.3)
        with pytest.raises(LLMError) as exc:
            llm.complete(MESSAGES, max_tokens=10)
    assert exc.value.kind == "timeout"


@pytest.mark.parametrize(
    "body",
    [b"this is not json", b'{"choices": []}', b'{"choices": [{"message": {"content": 5}}]}', b"[]"],
)
def test_adapter_malformed_bodies(body: bytes) -> None:
    with chat_server() as srv:
        srv.push(Reply(body=body))
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=5)
        with pytest.raises(LLMError) as exc:
            llm.complete(MESSAGES, max_tokens=10)
    assert exc.value.kind == "malformed"


def test_adapter_without_usage_reports_none() -> None:
    with chat_server() as srv:
        srv.push(Reply(content="{}", usage=None))
        out = OpenAICompatibleLLM(srv.url, "m", timeout=5).complete(MESSAGES, max_tokens=10)
    assert out.usage is None


def test_adapter_connection_refused() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", "m", timeout=2)
    with pytest.raises(LLMError) as exc:
        llm.complete(MESSAGES, max_tokens=10)
    assert exc.value.kind == "connection"


def test_adapter_wrong_route_is_http_404() -> None:
    with chat_server() as srv:
        llm = OpenAICompatibleLLM(srv.url.removesuffix("/v1"), "m", timeout=5)
        with pytest.raises(LLMError) as exc:
            llm.complete(MESSAGES, max_tokens=10)
    assert exc.value.status == 404


def test_settings_default_to_extractive(ws) -> None:
    llm = make_llm(load_config(ws))
    assert isinstance(llm, ExtractiveLLM) and not llm.metered


def test_settings_openai_adapter_from_config(ws, monkeypatch: pytest.MonkeyPatch) -> None:
    ws.config_path.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "qwen"\n'
        'api_key_env = "MY_KEY"\ntimeout = 12\n'
    )
    monkeypatch.setenv("MY_KEY", "secret-value")
    llm = make_llm(load_config(ws))
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.model, llm.api_key, llm.timeout) == ("qwen", "secret-value", 12.0)
    assert isinstance(make_llm(load_config(ws), "extractive"), ExtractiveLLM)
    assert make_llm(load_config(ws), "other").model == "other"


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ("[llm]\ntimeout = 0\n", "[llm] timeout = 0 is out of range"),
        ('[llm]\nbase_url = "ftp://x"\n', "must start with http"),
        ('[llm]\nprovider = "openai"\n', "base_url is required"),
        ('[llm]\nprovider = "magic"\n', "allowed: extractive, openai"),
        ('[llm]\nbase_url = "http://x/v1"\n', "model is required"),
    ],
)
def test_settings_errors_name_key_and_range(ws, toml: str, fragment: str) -> None:
    ws.config_path.write_text(toml)
    with pytest.raises(ConfigError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        make_llm(load_config(ws))
    if "timeout" in toml:
        with pytest.raises(ConfigError):
            llm_settings(load_config(ws))


def test_extractive_keeps_durable_sentences_and_drops_chatter() -> None:
    msgs = request(
        [
            "[0 user] Hi there! Thanks a lot for the help yesterday.\n"
            "[1 user] Let's use Postgres 16 for the database going forward.\n"
            "[2 assistant] Sounds good, I'll update the config now.\n"
            "[3 assistant] Note that the CI runner hangs when the Docker socket is missing.\n"
            "[4 user] Is this ready yet?\n"
            "[5 user] We always squash-merge feature branches (see PR #88, commit 4be2a9f1c).",
        ]
    )
    out = ExtractiveLLM().complete(msgs, max_tokens=500)
    doc = json.loads(out.text)
    assert out.usage is None
    memory = doc["memory"]
    assert "Postgres 16" in memory
    assert "Docker socket" in memory
    assert "squash-merge" in memory
    assert "#88" not in memory and "4be2a9f1c" not in memory
    assert (
        "Thanks" not in memory and "ready yet" not in memory and "update the config" not in memory
    )
    assert doc["used"] == ["s1"]
    assert ExtractiveLLM().complete(msgs, max_tokens=500).text == out.text  # deterministic


def test_extractive_fits_limit_and_newer_replaces_older() -> None:
    current = (
        "- We use MySQL 8 for the main database.\n- Always run the linter before pushing code."
    )
    msgs = request(
        ["[0 user] We switched from MySQL to Postgres 16 for the main database."], current
    )
    memory = json.loads(ExtractiveLLM().complete(msgs, max_tokens=500).text)["memory"]
    assert "MySQL 8" not in memory and "Postgres 16" in memory
    assert "linter" in memory
    many = [
        f"[{i} user] We decided to adopt tool number {i} for the build pipeline stage {i}."
        for i in range(80)
    ]
    small = json.loads(ExtractiveLLM().complete(request(many, limit=300), max_tokens=500).text)[
        "memory"
    ]
    assert 0 < len(small) <= 300


def test_extractive_rejects_non_json_request() -> None:
    with pytest.raises(LLMError):
        ExtractiveLLM().complete([{"role": "user", "content": "plain words"}], max_tokens=10)
