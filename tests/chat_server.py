"""A local server on 127.0.0.1 that speaks the OpenAI Chat Completions protocol, for tests and
benchmarks of the OpenAI-compatible adapter. Replies come from a queue of scripted behaviours
(status, body, delay) or, by default, from memcore's extractive answer with a usage block.
Every request is logged twice: parsed (``requests``) and as the raw body (``bodies``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes | None = None  # raw body; None = a chat.completion built from ``content``
    content: str | None = None  # None = the extractive answer to the request
    usage: dict[str, Any] | None = field(default_factory=dict)  # {} = computed, None = omitted
    delay: float = 0.0


@dataclass
class ChatServer:
    url: str
    requests: list[dict[str, Any]]
    headers: list[dict[str, str]]
    queue: list[Reply]
    usages: list[dict[str, int]]  # usage blocks actually sent
    default: Callable[[dict[str, Any]], Reply] | None = None
    bodies: list[bytes] = field(default_factory=list)  # every request body, byte for byte

    def sent_text(self) -> str:
        """Every request body as text, for asserting what reached the model."""
        return "\n".join(b.decode("utf-8", "replace") for b in self.bodies)

    def push(self, *replies: Reply) -> None:
        self.queue.extend(replies)


def _computed_usage(request: dict[str, Any], content: str) -> dict[str, Any]:
    prompt = sum(len(m.get("content", "")) for m in request.get("messages", [])) // 4 + 7
    completion = len(content) // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": prompt // 3},
    }


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    state = ChatServer("", [], [], [], [])

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            state.bodies.append(raw)
            try:
                request = json.loads(raw)
            except ValueError:
                request = {}
            state.requests.append(request)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "no such route"}}')
                return
            if state.queue:
                reply = state.queue.pop(0)
            elif state.default is not None:
                reply = state.default(request)
            else:
                reply = Reply()
            if reply.delay:
                time.sleep(reply.delay)
            if reply.body is not None:
                self._send(reply.status, reply.body)
                return
            content = reply.content
            if content is None:
                from memcore.judge.extractive import answer

                content = json.dumps(answer(json.loads(request["messages"][-1]["content"])))
            doc: dict[str, Any] = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": request.get("model", "test"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
            if reply.usage is not None:
                usage = reply.usage or _computed_usage(request, content)
                doc["usage"] = usage
                state.usages.append(usage)
            self._send(reply.status, json.dumps(doc).encode())

        def _send(self, status: int, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
