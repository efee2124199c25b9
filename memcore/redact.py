"""Secret redaction: applied before any text leaves for a model and before it enters memory.

Patterns cover the common credential shapes (provider API keys, tokens, JWTs, private key
blocks, credentials in URLs, ``password = …`` style assignments). A redacted secret becomes
``[REDACTED:<kind>]`` so the surrounding sentence still reads.
"""

from __future__ import annotations

import re

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("openai-key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("aws-key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer", re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{16,}")),
    ("url-credentials", re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+):[^\s@/]+@")),
    (
        "assignment",
        re.compile(
            r"(?i)\b((?:[a-z0-9_]*_)?(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key"
            r"|client[_-]?secret|auth)[a-z0-9_]*)(\s*[:=]\s*|\s+is\s+)([\"']?)([^\s\"',;]{6,})\3"
        ),
    ),
]


def redact(text: str) -> str:
    """``text`` with every secret-shaped span replaced by ``[REDACTED:<kind>]``."""
    for kind, pattern in _PATTERNS:
        if kind == "bearer":
            text = pattern.sub(lambda m: f"{m.group(1)} [REDACTED:token]", text)
        elif kind == "url-credentials":
            text = pattern.sub(lambda m: f"{m.group(1)}:[REDACTED:password]@", text)
        elif kind == "assignment":
            text = pattern.sub(_assignment, text)
        else:
            text = pattern.sub(f"[REDACTED:{kind}]", text)
    return text


def _assignment(m: re.Match[str]) -> str:
    value = m.group(4)
    if (
        value.startswith("[REDACTED")
        or value.lower() in _NOT_SECRETS
        or value.replace(".", "").replace("_", "").isdigit()
        or (value.isalpha() and len(value) < 12)
    ):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{m.group(3)}[REDACTED:secret]{m.group(3)}"


_NOT_SECRETS = {"required", "optional", "missing", "invalid", "expired", "redacted", "none", "null"}
