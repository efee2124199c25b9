"""Secret redaction for every path into memory and into a model.

``redact(text)`` replaces each secret with ``[REDACTED:<kind>]`` and keeps the words around it
(the key of ``"password": …``, the user and host of a URL, the ``Bearer`` of a header), so a
note still reads and a memory stays useful. Text without secrets comes back unchanged, and
``redact(redact(x)) == redact(x)``. The module imports nothing from memcore, so every layer
can use it.

Kinds (stable: new ones may be added, none renamed), see ``KINDS``:

- ``private-key``: a PEM private-key block, whole (also one cut off before its END or
  after its BEGIN, as in a chunked transcript).
- ``jwt``: three base64url segments starting ``eyJ``.
- ``anthropic-key`` (``sk-ant-…``), ``openai-key`` (``sk-…``, ``sk-proj-…``),
  ``github-token`` (``ghp_ gho_ ghu_ ghs_ ghr_ github_pat_``), ``gitlab-token`` (``glpat-``
  …), ``npm-token`` (``npm_``), ``huggingface-token`` (``hf_``), ``pypi-token``
  (``pypi-AgE…``), ``slack-token`` (``xoxb- xoxp- xoxa- xapp-`` …), ``slack-webhook`` (the
  path of a ``hooks.slack.com`` URL), ``stripe-key`` (secret, restricted and webhook-signing
  keys), ``google-api-key`` (``AIza…``), ``google-oauth-token`` (``ya29.…``).
- ``aws-access-key`` (``AKIA``/``ASIA`` ids), ``aws-secret-key`` (40 base64 characters under
  an AWS key name, on a line that mentions AWS, or bare when unmistakable).
- ``azure-account-key`` (``AccountKey=``, ``SharedAccessKey=``), ``azure-sas``
  (``SharedAccessSignature``, ``sig=``).
- ``basic-auth`` (``Authorization: Basic …``, ``curl -u user:pw``), ``bearer-token``
  (``Bearer …``, ``Authorization: Token …``).
- ``url-credentials``: the password of ``scheme://user:pw@host`` or a secret query parameter
  (``?access_token=``, ``&api_key=``, ``X-Amz-Signature=`` …).
- ``password``: a value under a password-like name in any syntax (JSON, YAML, ``.env``,
  ``--password``, ``mysql -p…``, ``redis-cli -a …``, ``.netrc``, "the password for staging
  is …").
- ``env-secret``: ``NAME=value`` with an upper-case environment name (``*_TOKEN``,
  ``*_SECRET``, ``*_KEY`` …).
- ``json-secret``: a value under a secret-looking key in JSON, YAML, TOML, INI, XML or code.
- ``cli-secret``: the value of a ``--token``, ``--api-key`` or ``--secret`` flag.
- ``secret``: a key, token or secret named in prose ("the API key for CI is …").
- ``cookie``: a random-looking value in a ``Cookie:`` or ``Set-Cookie:`` header.

Vendor shapes are checked first, so ``GITHUB_TOKEN=ghp_…`` reads ``[REDACTED:github-token]``.
A name only counts with a value that fits it: ``*_KEY`` or ``auth`` need a random-looking
value, token and secret names a digit or a symbol (generated tokens have them), prose ("the
password is …") too, a bare word as a password only on a line of its own (YAML); and
placeholders (``<token>``, ``${VAR}``, ``***``), references (``os.environ[…]``,
``secret/payrail/db``) and code (``token = next_token``) stay.

Every pattern is compiled once, starts with a literal where it can and uses possessive
quantifiers, so the time is linear in the text and nothing backtracks catastrophically.

No detector library. detect-secrets (Yelp) works offline but reports a secret's value and
line, not its span, reads line by line (no multi-line PEM block), keys its keyword rules off
file names (it missed ``password = hunter2hunter`` in a ``.md``), brings requests and
PyYAML, last released in May 2024 and took about 4 s for 600 KB of notes; its maintained
fork bc-detect-secrets has the same design. Microsoft's secret masker gives spans with no
dependencies but is a beta whose rules are mostly Azure's own key formats. Neither gives the
spans, kinds and speed that redaction needs, so the rules live here.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

__all__ = ["KINDS", "Finding", "contains_secret", "find_secrets", "redact"]


class _LazyPattern:
    """A regular expression compiled on first use: ``find_secrets`` runs only the rules whose
    hints occur in the text, so a process that redacts a few snippets compiles a few patterns
    (compiling all of them took about 20 ms, a quarter of a ``memory record`` process)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> object:
        compiled = re.compile(*self._args)
        for method in ("match", "search", "finditer", "fullmatch", "findall", "sub", "split"):
            setattr(self, method, getattr(compiled, method))  # later calls skip this function
        return getattr(compiled, name)


def _lazy_re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, deferred until the pattern is first used."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))


KINDS: tuple[str, ...] = (
    "private-key",
    "jwt",
    "anthropic-key",
    "openai-key",
    "github-token",
    "gitlab-token",
    "npm-token",
    "huggingface-token",
    "pypi-token",
    "slack-token",
    "slack-webhook",
    "stripe-key",
    "google-api-key",
    "google-oauth-token",
    "aws-access-key",
    "aws-secret-key",
    "azure-account-key",
    "azure-sas",
    "basic-auth",
    "bearer-token",
    "url-credentials",
    "password",
    "env-secret",
    "json-secret",
    "cli-secret",
    "secret",
    "cookie",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: its kind and its span ``text[start:end]``."""

    kind: str
    start: int
    end: int


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``; unchanged when none."""
    findings = find_secrets(text)
    if not findings:
        return text
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(f"[REDACTED:{f.kind}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def contains_secret(text: str) -> bool:
    """Whether ``redact`` would change ``text``."""
    return bool(find_secrets(text))


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, in order, not overlapping.

    Rules run in order, each on the text as the rules before it left it (secrets already
    replaced by markers), so a second pass over ``redact``'s output sees what the first did.
    """
    if not text:
        return []
    marks = [_Mark(m.start(), m.end(), m.start(), m.end(), "") for m in _MARKER.finditer(text)]
    cur = text
    found = _private_keys(cur, _Spans(marks))
    if found:
        cur, marks = _substitute(cur, marks, found)
    low = _lower(cur)
    for rule in _RULES:
        if rule.hints and not any(h in low for h in rule.hints):
            continue
        found = _apply(rule, cur, low, _Spans(marks))
        if found:
            cur, marks = _substitute(cur, marks, found)
            low = _lower(cur)
    return [Finding(m.kind, m.orig_start, m.orig_end) for m in marks if m.kind]


# --- machinery --------------------------------------------------------------------------------

_MARKER = _lazy_re(r"\[REDACTED:[a-z0-9-]{1,40}\]")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_Judge = Callable[[re.Match[str], str], "str | None"]


def _lower(text: str) -> str:
    """``text`` lowered, offset for offset (a few characters grow under ``str.lower``)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern whose group ``group`` holds the secret.

    ``judge`` returns the kind, or None when the match is no secret. ``hints`` (lower case)
    skip the rule for a text that holds none of them; ``starts`` gives the only offsets a
    match can start at; ``windows`` the only stretches a match can lie in; ``context``
    must occur on the match's line.
    """

    kind: str
    pattern: re.Pattern[str]
    group: str | tuple[str, ...] = "s"
    judge: _Judge | None = None
    hints: tuple[str, ...] = ()
    starts: Callable[[str], Iterable[int]] | None = None
    windows: Callable[[str], Iterable[tuple[int, int]]] | None = None
    context: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class _Mark:
    """A marker in the working text and the span of the original text it replaced."""

    start: int
    end: int
    orig_start: int
    orig_end: int
    kind: str  # "" for a marker that was in the text already


class _Spans:
    """The markers of the working text, for overlap tests."""

    def __init__(self, marks: list[_Mark]) -> None:
        self._starts = [m.start for m in marks]
        self._ends = [m.end for m in marks]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_right(self._starts, start)
        if i and self._ends[i - 1] > start:
            return True
        return i < len(self._starts) and self._starts[i] < end


def _substitute(
    cur: str, marks: list[_Mark], found: list[tuple[int, int, str]]
) -> tuple[str, list[_Mark]]:
    """``cur`` with the ``found`` spans replaced by markers, and all markers' new places."""
    items: list[tuple[int, int, _Mark | str]] = [(m.start, m.end, m) for m in marks]
    items += [(s, e, kind) for s, e, kind in found]
    items.sort(key=lambda t: t[0])
    parts: list[str] = []
    out: list[_Mark] = []
    pos = size = shift = 0  # shift: original offset minus working offset, after ``pos``
    for s, e, item in items:
        parts.append(cur[pos:s])
        size += s - pos
        if isinstance(item, _Mark):
            piece = cur[s:e]
            mark = _Mark(size, size + len(piece), item.orig_start, item.orig_end, item.kind)
            shift = item.orig_end - e
        else:
            piece = f"[REDACTED:{item}]"
            mark = _Mark(size, size + len(piece), s + shift, e + shift, item)
        parts.append(piece)
        out.append(mark)
        size += len(piece)
        pos = e
    parts.append(cur[pos:])
    return "".join(parts), out


def _line(text: str, pos: int) -> tuple[int, int]:
    """The start and end of the line holding ``text[pos]``."""
    hi = text.find("\n", pos)
    return text.rfind("\n", 0, pos) + 1, hi if hi >= 0 else len(text)


def _matches(rule: _Rule, text: str, low: str) -> Generator[re.Match[str], int, None]:
    """Candidate matches; the caller sends back where the next one may start."""
    if rule.starts is not None:
        pos = 0
        for start in rule.starts(low):
            if start >= pos:
                m = rule.pattern.match(text, start)
                if m is not None:
                    pos = yield m
        return
    windows = rule.windows(text) if rule.windows is not None else [(0, len(text))]
    for lo, hi in windows:
        pos = lo
        while pos <= hi:
            m = rule.pattern.search(text, pos, hi)
            if m is None:
                break
            pos = yield m


def _apply(rule: _Rule, text: str, low: str, spans: _Spans) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    line_lo = line_hi = -1  # the last line whose context was looked up
    in_context = False
    gen = _matches(rule, text, low)
    m = next(gen, None)
    while m is not None:
        s, e = _span(m, rule.group)
        kind = None
        if s < e and not spans.overlaps(s, e):
            kind = rule.kind if rule.judge is None else rule.judge(m, text)
            if kind and rule.context is not None:
                if not line_lo <= s < line_hi:
                    line_lo, line_hi = _line(text, s)
                    in_context = rule.context.search(text, line_lo, line_hi) is not None
                kind = kind if in_context else None
        if kind:
            found.append((s, e, kind))
        # after a secret, go on past it; after a miss, a match may start inside this one
        nxt = max(m.end(), m.start() + 1) if kind else m.start() + 1
        try:
            m = gen.send(nxt)
        except StopIteration:
            break
    return found


def _span(m: re.Match[str], group: str | tuple[str, ...]) -> tuple[int, int]:
    if isinstance(group, str):
        return m.span(group)
    return m.span(m.lastgroup) if m.lastgroup in group else (0, 0)


_C_LOG_C = [0.0] + [c * math.log2(c) for c in range(1, 4097)]
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWERCASE = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")


def _entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    counts = Counter(s).values()
    if n > 4096:
        return -sum(c / n * math.log2(c / n) for c in counts)
    return math.log2(n) - sum(map(_C_LOG_C.__getitem__, counts)) / n


def _mixed(s: str) -> bool:
    """ASCII upper case, lower case and digits all present, as in generated keys."""
    chars = set(s)
    return bool(chars & _UPPER and chars & _LOWERCASE and chars & _DIGITS)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# --- private keys -----------------------------------------------------------------------------

_PEM = _lazy_re(r"-----(BEGIN|END)[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = _lazy_re(r"(?:[A-Za-z0-9+/=\s\\:,]|-(?!----))*+")
_PEM_BODY_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n\\"
)
_B64_RUN = _lazy_re(r"[A-Za-z0-9+/=]{16}")
_B64_WORD = _lazy_re(r"[A-Za-z0-9+/=]{4}")
_PEM_MAX = 65536


def _private_keys(text: str, spans: _Spans) -> list[tuple[int, int, str]]:
    """Whole PEM blocks; a BEGIN without END or an END without BEGIN takes its body along."""
    found: list[tuple[int, int, str]] = []
    marks = list(_PEM.finditer(text)) if "PRIVATE KEY-----" in text else []
    done = 0  # nothing before this is looked at again
    i = 0
    while i < len(marks):
        m = marks[i]
        i += 1
        if m.start() < done:
            continue
        if m.group(1) == "BEGIN":
            nxt = marks[i] if i < len(marks) else None
            if nxt and nxt.group(1) == "END" and nxt.end() - m.start() <= _PEM_MAX:
                between = _PEM_BODY.match(text, m.end(), nxt.start())
                if not (between and between.end() == nxt.start()) or not _B64_WORD.search(
                    text, m.end(), nxt.start()
                ):
                    done = m.end()  # a BEGIN and an END named in prose, no key between
                    continue
                start, end = m.start(), nxt.end()
                i += 1
            else:
                body = _PEM_BODY.match(text, m.end())
                start, end = m.start(), body.end() if body else m.end()
                while end > m.end() and text[end - 1].isspace():
                    end -= 1
                if not _B64_RUN.search(text, m.end(), end):
                    done = m.end()
                    continue
        else:
            start = m.start()
            while start > done and text[start - 1] in _PEM_BODY_CHARS:
                start -= 1
            while start < m.start() and text[start] in "\r\n":
                start += 1
            if not _B64_RUN.search(text, start, m.start()):
                done = m.end()
                continue
            end = m.end()
        if not spans.overlaps(start, end):
            found.append((start, end, "private-key"))
        done = end
    return found


# --- vendor and header shapes -----------------------------------------------------------------


def _openai(m: re.Match[str], text: str) -> str | None:
    body = m["body"]
    if m["proj"] or (_mixed(body) and body.count("-") <= 3):
        return "openai-key"
    return None


def _huggingface(m: re.Match[str], text: str) -> str | None:
    s = m["s"][3:]
    letters = [c for c in s if c.isalpha()]
    upper = sum(c.isupper() for c in letters) / max(len(letters), 1)
    if sum(c.isdigit() for c in s) >= 2 or 0.25 <= upper <= 0.75:
        return "huggingface-token"
    return None


def _bearer(m: re.Match[str], text: str) -> str | None:
    s = m["s"]
    digit = any(c.isdigit() for c in s)
    cases = any(c.isupper() for c in s) and any(c.islower() for c in s)
    return "bearer-token" if digit or cases else None


def _curl_user(m: re.Match[str], text: str) -> str | None:
    return None if m["s"].isdigit() or _rejected(m["s"]) else "basic-auth"


# "Authorization:" or "authorization:", as a header, a JSON key or an escaped JSON key
_AUTHORIZATION = (
    r"uthorization(?<=[Aa]uthorization)"
    r"(?<![A-Za-z0-9_-][Aa]uthorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
)

_TOKEN_RULES: list[_Rule] = [
    _Rule(
        "jwt",
        _lazy_re(
            r"(?P<s>eyJ(?<![A-Za-z0-9_.-]eyJ)[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"
            r"\.[A-Za-z0-9_-]*+)"
        ),
        hints=("eyj",),
    ),
    _Rule(
        "anthropic-key",
        _lazy_re(r"(?P<s>sk-ant-(?<![A-Za-z0-9_-]sk-ant-)[A-Za-z0-9_-]{20,}+)"),
        hints=("sk-ant-",),
    ),
    _Rule(
        "openai-key",
        _lazy_re(
            r"(?P<s>sk-(?<![A-Za-z0-9_-]sk-)(?P<proj>proj-|svcacct-|admin-)?"
            r"(?P<body>[A-Za-z0-9_-]{20,}+))"
        ),
        judge=_openai,
        hints=("sk-",),
    ),
    _Rule(
        "github-token",
        _lazy_re(r"(?P<s>gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{30,}+)"),
        hints=("gh",),
    ),
    _Rule(
        "github-token",
        _lazy_re(r"(?P<s>github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{30,}+)"),
        hints=("github_pat_",),
    ),
    _Rule(
        "gitlab-token",
        _lazy_re(
            r"(?P<s>gl(?<![A-Za-z0-9_-]gl)(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat)-"
            r"[A-Za-z0-9_-]{20,}+)"
        ),
        hints=("gl",),
    ),
    _Rule(
        "npm-token", _lazy_re(r"(?P<s>npm_(?<![A-Za-z0-9_]npm_)[A-Za-z0-9]{30,}+)"), hints=("npm_",)
    ),
    _Rule(
        "huggingface-token",
        _lazy_re(r"(?P<s>hf_(?<![A-Za-z0-9_]hf_)[A-Za-z0-9]{30,}+)(?![A-Za-z0-9_])"),
        judge=_huggingface,
        hints=("hf_",),
    ),
    _Rule(
        "pypi-token",
        _lazy_re(r"(?P<s>pypi-AgE(?<![A-Za-z0-9_-]pypi-AgE)[A-Za-z0-9_-]{40,}+)"),
        hints=("pypi-age",),
    ),
    _Rule(
        "slack-webhook",
        _lazy_re(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9/_-]{8,}+)"),
        hints=("hooks.slack.com/",),
    ),
    _Rule(
        "slack-token",
        _lazy_re(r"(?P<s>x(?<![A-Za-z0-9_-]x)(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}+)"),
        hints=("xox", "xapp-"),
    ),
    _Rule(
        "stripe-key",
        _lazy_re(r"(?P<s>sk_(?<![A-Za-z0-9_]sk_)(?:live|test)_[A-Za-z0-9]{16,}+)"),
        hints=("sk_",),
    ),
    _Rule(
        "stripe-key",
        _lazy_re(r"(?P<s>rk_(?<![A-Za-z0-9_]rk_)(?:live|test)_[A-Za-z0-9]{16,}+)"),
        hints=("rk_",),
    ),
    _Rule(
        "stripe-key",
        _lazy_re(r"(?P<s>whsec_(?<![A-Za-z0-9_]whsec_)[A-Za-z0-9+/=]{24,}+)"),
        hints=("whsec_",),
    ),
    _Rule(
        "google-api-key",
        _lazy_re(r"(?P<s>AIza(?<![A-Za-z0-9_-]AIza)[A-Za-z0-9_-]{30,}+)"),
        hints=("aiza",),
    ),
    _Rule(
        "google-oauth-token",
        _lazy_re(r"(?P<s>ya29\.(?<![A-Za-z0-9_.-]ya29\.)[A-Za-z0-9_-]{20,}+)"),
        hints=("ya29.",),
    ),
    _Rule(
        "aws-access-key",
        _lazy_re(
            r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA)(?<![A-Za-z0-9][A-Z]{4})[A-Z0-9]{16})(?![A-Za-z0-9])"
        ),
        hints=("akia", "asia", "abia", "acca"),
    ),
    _Rule(
        "azure-account-key",
        _lazy_re(r"AccountKey(?<![A-Za-z0-9]AccountKey)[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/=]{20,}+)"),
        hints=("accountkey",),
    ),
    _Rule(
        "azure-account-key",
        _lazy_re(
            r"SharedAccessKey(?<![A-Za-z0-9]SharedAccessKey)[ \t]*=[ \t]*"
            r"(?P<s>[A-Za-z0-9+/=]{20,}+)"
        ),
        hints=("sharedaccesskey",),
    ),
    _Rule(
        "azure-sas",
        _lazy_re(
            r"SharedAccessSignature(?<![A-Za-z0-9]SharedAccessSignature)"
            r"(?:[ \t]*=[ \t]*|[ \t]+)(?P<s>[^\s;'\"]{8,}+)"
        ),
        hints=("sharedaccesssignature",),
    ),
    _Rule(
        "azure-sas",
        _lazy_re(r"sig=(?<=[?&;]sig=)(?P<s>[A-Za-z0-9%+/=_-]{16,}+)"),
        hints=("sig=",),
    ),
    _Rule(
        "basic-auth",
        _lazy_re(_AUTHORIZATION + r"(?i:basic)[ \t]+(?P<s>[A-Za-z0-9+/=]{8,}+)"),
        hints=("authorization",),
    ),
    _Rule(
        "bearer-token",
        _lazy_re(_AUTHORIZATION + r"(?i:token|bot|apikey)[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{8,}+)"),
        judge=_bearer,
        hints=("authorization",),
    ),
    _Rule(
        "bearer-token",
        _lazy_re(
            r"earer(?<=[Bb]earer)(?<![A-Za-z0-9_-][Bb]earer)"
            r"[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{16,}+)"
        ),
        judge=_bearer,
        hints=("bearer",),
    ),
    _Rule(
        "basic-auth",
        _lazy_re(
            r"-(?<!\S-)(?:u|-user)[ \t]+[\"']?"
            r"(?:\[REDACTED:[a-z0-9-]{1,40}\]|[^\s:'\"\[\]]){1,200}+:(?P<s>[^\s'\"]{1,512}+)"
        ),
        judge=_curl_user,
        hints=("curl",),
        context=_lazy_re(r"\bcurl\b"),
    ),
]

# --- credentials in URLs ----------------------------------------------------------------------

_URL_USERINFO = _lazy_re(
    r"://(?<=[A-Za-z0-9+.-]://)"
    r"(?:\[REDACTED:[a-z0-9-]{1,40}\]|[^\s:/?#@'\"<>\[\]]){0,256}+"
    r":(?P<s>(?:[^\s/?#@'\"<>]|@(?=[^\s/?#@'\"<>]{0,256}+@)){1,256}+)@"
)
_URL_QUERY = _lazy_re(
    r"[?&](?P<key>(?i:access_token|refresh_token|id_token|auth_token|token|api_key|apikey"
    r"|api-key|client_secret|password|passwd|secret|x-amz-signature|x-amz-security-token"
    r"|x-goog-signature|signature|key))=(?P<s>[^\s&#'\"<>]{1,2048}+)"
)


_EXAMPLE_PASSWORDS = _set("pass password passwd pw pwd secret token")


def _url_password(m: re.Match[str], text: str) -> str | None:
    value = m["s"]
    if _rejected(value, quoted=True) or value.lower() in _EXAMPLE_PASSWORDS:
        return None  # user:pass@host, the textbook example
    return "url-credentials"


def _url_query(m: re.Match[str], text: str) -> str | None:
    value = m["s"]
    if _rejected(value):
        return None
    if m["key"].lower() in ("key", "signature"):
        return "url-credentials" if _random_like(value) else None
    return "url-credentials" if len(value) >= 4 else None


_URL_RULES: list[_Rule] = [
    _Rule("url-credentials", _URL_USERINFO, judge=_url_password, hints=("://",)),
    _Rule("url-credentials", _URL_QUERY, judge=_url_query, hints=("=",)),
]

# --- names with values ------------------------------------------------------------------------

_GATE_WORDS = r"p(?:ass|wd|w)|secret|token|key|auth|cred"
_GATE = r"(?=[A-Za-z0-9_.$-]{0,80}?(?i:" + _GATE_WORDS + "))"
_VALUE = (
    r"(?:\\?\"(?P<dq>(?:[^\"\\\n]|\\[^\"\n]){1,2048}+)\\?\""
    r"|\\?'(?P<sq>(?:[^'\\\n]|\\[^'\n]){1,2048}+)\\?'"
    r"|`(?P<bq>[^`\n]{1,2048}+)`"
    # unquoted: up to a delimiter or an "=" that starts another assignment
    r"|(?P<uq>(?:[^\s\"'`,;)}\]<>|\\=]|=(?![^\s\"'`,;)}\]<>|\\=])){1,512}+))"
)
_VALUE_GROUPS = ("dq", "sq", "bq", "uq")
_ASSIGN = _lazy_re(
    r"(?:(?<=\$env:)|(?<![A-Za-z0-9_.$:-]))"  # a key starts a word; PowerShell's $env:NAME too
    + _GATE
    + r"(?P<key>[A-Za-z_$][A-Za-z0-9_.$-]{0,80}+)"
    r"\\?[\"'`]?(?:\*\*|__)?"
    r"(?:(?P<sp>[ \t]{0,3}+)(?P<sep>:=|=>|=|:)(?![:=])|[ \t]++(?P<is>is)[ \t]++)"
    r"(?:\*\*|__)?[ \t]{0,3}+" + _VALUE
)
_FLAG = _lazy_re(
    r"-(?<![A-Za-z0-9_-]-)-?" + _GATE + r"(?P<key>[A-Za-z][A-Za-z0-9-]{0,40}+)"
    r"(?:(?P<sep>=)|[ \t]++)" + _VALUE
)
_XML = _lazy_re(
    r"<" + _GATE + r"(?P<key>[A-Za-z_][A-Za-z0-9_.:-]{0,60}+)>(?P<dq>[^<\n]{1,1024}+)</"
)
_DB_CLI = _lazy_re(r"-(?<![A-Za-z0-9_-]-)p(?P<s>[^\s'\"-][^\s'\"]{3,255}+)")
_LOGIN_CLI = _lazy_re(r"-(?<![A-Za-z0-9_-]-)p[ \t]++(?P<s>[^\s'\"-][^\s'\"]{3,255}+)")
_REDIS_CLI = _lazy_re(r"-(?<![A-Za-z0-9_-]-)a[ \t]++(?P<s>[^\s'\"-][^\s'\"]{3,255}+)")

_GATE_HITS = _lazy_re(_GATE_WORDS)
_KEY_RUN = _lazy_re(r"[a-z0-9_.$-]{0,82}")


def _gate_hits(low: str) -> Iterable[int]:
    """Where a gate word starts."""
    return (m.start() for m in _GATE_HITS.finditer(low))


def _key_starts(low: str) -> Iterable[int]:
    """Where a key holding a gate word can start: the start of the run of key characters."""
    rev = None
    last = -1
    for hit in _GATE_HITS.finditer(low):
        g = hit.start()
        if rev is None:
            rev = low[::-1]
        run = _KEY_RUN.match(rev, len(low) - g)
        length = run.end() - run.start() if run else 0
        start = g - length
        if length <= 81 and start != last:
            last = start
            yield start


_SPLIT = _lazy_re(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PASSWORD_WORDS = _set("password passwd passphrase pwd pass pw pword")
_KEY_SECRET = _set(
    "api secret private access signing encryption encrypt master hmac webhook session client"
    " app license account shared storage subscription admin root deploy consumer service auth"
    " crypto cipher jwt aes sas sendgrid stripe openai anthropic mailgun twilio"
)
_KEY_NOT_SECRET = _set(
    "sort partition primary foreign cache idempotency routing public object s3 kms dedup dedupe"
    " lookup group hash range row message map dict config registry unique composite natural"
    " surrogate shard bucket index search translation i18n locale ssh gpg pgp id cursor tenant"
)
_TOKEN_NOT_SECRET = _set(
    "bos eos pad unk sep cls mask start end special added page next continuation pagination"
    " sync cancellation cancel resume max min num total count"
)
_STOP = _set(
    "required optional none null nil true false yes no on off undefined empty redacted hidden"
    " masked secret secrets password passwords passwd token tokens key keys string str bytes"
    " int integer bool boolean any object env see todo tbd fixme example sample placeholder"
    " expired invalid missing rotated revoked valid set unset default auto prompt ask same"
    " here below above it the a an in at from via stored managed provided supplied generated"
    " reset update updated new old value values needed unknown n/a na changed hash hashed"
    " encrypted optional[str] secretstr your yours mine ours blank tbc sensitive private"
    " omitted removed elided lambda function await async yield not"
)
_PLACEHOLDER = _lazy_re(
    r"(?i)^(?:<.*|\{\{.*|\{[A-Za-z_][A-Za-z0-9_.!:]*\}?|\$\{.*|\$\(.*|\$[A-Za-z_].*"
    r"|%\(?[A-Za-z_].*|#[0-9a-f]{3,8}|[a-z]+\?|\*{2,}.*|x{4,}|\.{3,}|…|•+|\?+|_+|-+|#+"
    r"|your[_-].*|(?:insert|replace|put|enter|add)[_-].*|.*[_-]here"
    r"|.*(?:\.\.\.|…|\*\*\*).*|(?:\\[nrt]|\s)+"
    r"|!(?:vault|ref|sub|getatt|secret)\b.*|@microsoft\.keyvault.*|&.*|\*[A-Za-z_].*"
    r"|arn:.*|op://.*|vault:.*|ref\+.*|sops:.*|file:.*|secret://.*|\[redacted.*)$"
)
_REFERENCE = _lazy_re(
    r"(?i)^(?:os\.(?:environ|getenv).*|process\.env.*|env(?:iron)?[\[.(].*|getenv.*"
    r"|(?:settings|config|conf|cfg|self|this|args|opts|options|params|secrets|vars|ctx"
    r"|context|request|req|creds|credentials|env)\.[A-Za-z_].*|[A-Za-z_][\w.]*\(.*\))$"
)
_NUMBER = _lazy_re(r"^[+-]?\d+(?:[.,:]\d+)*[A-Za-z%]{0,3}$")
_VERSION = _lazy_re(r"^v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.]+)?$")
_DATE = _lazy_re(r"^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$")
_UUID = _lazy_re(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_LOWER_PATH = _lazy_re(r"^[a-z0-9_.<>{}@-]*(?:/[a-z0-9_.<>{}@*-]*)+$")
_DOTTED = _lazy_re(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_CONSTANT = _lazy_re(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_IDENTIFIER = _lazy_re(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLUG = _lazy_re(r"(?i)^(?:[a-z]+\d*|\d+)(?:[-_.](?:[a-z]+\d*|\d+)){2,}$")
_WORDY = _lazy_re(r"^[A-Za-z_-]+$")
_TYPE_NAME = _lazy_re(r"^(?:[A-Z][a-z]+){2,}$")
_NESTED = _lazy_re(r"^[A-Za-z_][A-Za-z0-9_]*=[^=]")
_FAMILY_WORDS = {"password": ("pass", "pwd"), "aws": ("secret",), "secret": ("token", "secret")}
_SYMBOLS = frozenset("!@#$%^&*+=?~")
_FIELD_END = frozenset("\r\n#,;})]\"'`|")
_LINE_LEAD = _lazy_re(r"[ \t>*#+-]*[\"'{\[]?[ \t]*")


@lru_cache(maxsize=4096)
def _words(key: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _SPLIT.findall(key))


@lru_cache(maxsize=4096)
def _classify(key: str) -> tuple[str, bool] | None:
    """(family, strong) for a key name, family ``password``, ``aws`` or ``secret``; None if
    the name is no secret's. A strong name takes any real value, a weak one (``*_KEY``,
    ``auth``, ``token_*``) only a random-looking one."""
    words = _words(key)
    if not words:
        return None
    last, prev = words[-1], words[-2] if len(words) > 1 else ""
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd", "passphrase")):
        return "password", True
    if ("aws" in words and "secret" in words) or words[-3:] == ("secret", "access", "key"):
        return "aws", True
    if last.endswith("secretaccesskey"):
        return "aws", True
    if last.endswith("token"):
        return None if last == "token" and prev in _TOKEN_NOT_SECRET else ("secret", True)
    if last.endswith(("secret", "apikey", "secretkey", "privatekey", "accesskey", "signingkey")):
        return "secret", True
    if last == "key":
        if not prev or prev in _KEY_NOT_SECRET:
            return None
        return "secret", prev in _KEY_SECRET
    if last in ("auth", "authorization", "credential", "credentials", "creds"):
        return "secret", False
    if any(w in ("password", "passwd", "secret", "token", "apikey") for w in words[:-1]):
        return "secret", False
    return None


def _rejected(value: str, quoted: bool = False) -> bool:
    """A placeholder, reference, type or status word: not a secret."""
    v = value.strip()
    if not v or v.lower().rstrip(":,.") in _STOP or _PLACEHOLDER.match(v) or _REFERENCE.match(v):
        return True
    if (v.startswith(("/", "~/", "./")) or _LOWER_PATH.match(v)) and not _random_like(v):
        return True  # a file or vault path
    return not quoted and ("://" in v or "(" in v or "[" in v or v.startswith("="))


def _random_like(value: str) -> bool:
    """Long, with letters and digits, no spaces, not a known id shape: a generated key."""
    v = value
    if len(v) < 16 or any(c.isspace() for c in v):
        return False
    if not (any(c.isalpha() for c in v) and any(c.isdigit() for c in v)):
        return False
    if _UUID.match(v) or _LOWER_PATH.match(v) or _SLUG.match(v):
        return False
    if _DOTTED.match(v) and not _mixed(v):
        return False  # settings.API_KEY, self.token
    if _VERSION.match(v) or _DATE.match(v):
        return False
    return _entropy(v) >= 3.0


def _password_like(value: str) -> bool:
    """A value that reads as a password even in prose: letters with a digit or a symbol."""
    v = value
    if len(v) < 6 or not any(c.isalpha() for c in v):
        return False
    if not (any(c.isdigit() for c in v) or any(c in _SYMBOLS for c in v)):
        return False
    return not (_VERSION.match(v) or _DATE.match(v) or _UUID.match(v) or _LOWER_PATH.match(v))


def _alone(text: str, start: int, end: int) -> bool:
    """Whether ``key: value`` is all its line holds (a YAML or config line, not prose)."""
    lo = max(0, start - 200)
    nl = text.rfind("\n", lo, start)
    esc = text.rfind("\\n", lo, start)
    if nl < 0 and esc < 0 and lo > 0:
        return False
    line_start = max(nl + 1, esc + 2 if esc >= 0 else 0)
    if not _LINE_LEAD.fullmatch(text, line_start, start):
        return False
    n = len(text)
    while end < n and text[end] in " \t":
        end += 1
    return end >= n or text[end] in "\r\n#" or text.startswith("\\n", end)


def _field_end(text: str, end: int) -> bool:
    """Whether only a comment, a delimiter or the line's end follows ``end``."""
    n = len(text)
    while end < n and text[end] in " \t":
        end += 1
    return end >= n or text[end] in _FIELD_END or text.startswith("\\n", end)


def _value(m: re.Match[str]) -> tuple[str, str, bool]:
    """(group, value, quoted) of a match that ends with ``_VALUE``."""
    name = m.lastgroup or ""
    return name, m[name] if name else "", name != "uq"


def _judge_value(
    key: str, value: str, quoted: bool, form: str, plain_ok: bool, tight: bool = True
) -> str | None:
    """The family of the value under ``key`` when it is a secret, else None.

    ``form`` is how the value was given: ``assign`` (``=``, ``:=``, ``=>``), ``colon``,
    ``is`` (prose) or ``flag-space`` (``--token value``). ``plain_ok`` says the place reads
    as configuration, so that a plain word (``letmein``) counts as a value there; ``tight``
    that ``=`` had no spaces around it (``.env``, not code).
    """
    cls = _classify(key)
    if cls is None or _rejected(value, quoted):
        return None
    family, strong = cls
    shaped = _password_like(value) or _random_like(value)
    if not strong:
        return family if _random_like(value) else None
    if form in ("is", "flag-space"):
        if form == "is" and family != "password":
            return None
        return family if shaped else None
    if family != "password" and any(c.isspace() for c in value):
        return None
    low = value.lower()
    if low == key.lower() or _CONSTANT.match(value):
        return None  # PASSWORD = "PASSWORD", a constant's name
    words = _words(key)
    names = (*words, *_FAMILY_WORDS[family])
    if _WORDY.match(value) and any(w in low for w in names):
        return None  # "no-password-required", "next_token", "NextToken": a label
    if words == ("pass",) and not shaped:
        return None  # 'pass': the Python statement, a pass/fail flag
    if family != "password":
        if not shaped:
            return None  # generated tokens have digits or symbols; "next_marker" is a name
        if _IDENTIFIER.match(value) and any(w in low for w in words):
            return None  # private_key: Ed25519PrivateKey, a type
    elif _TYPE_NAME.match(value):
        return None  # password: SecretBytes
    if quoted:
        return family if family == "password" or len(value) >= 3 else None
    if not shaped and _IDENTIFIER.match(value) and "_" in value:
        return None  # token=api_key, task_token=callback_id: code
    if _NESTED.match(value):
        return None  # offendingToken:Token=None
    if not _random_like(value) and _DOTTED.match(value):
        return None
    if len(value) < 4 or (_NUMBER.match(value) and family != "password"):
        return None
    if not shaped and not plain_ok:
        return None
    if not shaped and _IDENTIFIER.match(value) and form == "assign" and not tight:
        return None  # token = nextchar: a variable in code
    return family


def _named_kind(family: str, other: str) -> str:
    return {"password": "password", "aws": "aws-secret-key"}.get(family, other)


def _assign(m: re.Match[str], text: str) -> str | None:
    key = m["key"]
    name, value, quoted = _value(m)
    tight = True
    if m["is"]:
        form, plain_ok = "is", False
    elif m["sep"] == ":":
        form = "colon"
        plain_ok = not quoted and _alone(text, m.start("key"), m.end(name))
    else:
        form = "assign"
        tight = not m["sp"] and m.start(name) == m.end("sep")
        plain_ok = tight or _field_end(text, m.end(name))
    family = _judge_value(key, value, quoted, form, plain_ok, tight)
    if family is None:
        return None
    env = key.isupper() and m["sep"] == "=" and not m["sp"]
    return _named_kind(family, "env-secret" if env else "json-secret")


def _flag(m: re.Match[str], text: str) -> str | None:
    _, value, quoted = _value(m)
    if value.startswith("-"):
        return None
    form = "assign" if m["sep"] else "flag-space"
    family = _judge_value(m["key"], value, quoted, form, plain_ok=True)
    return None if family is None else _named_kind(family, "cli-secret")


def _xml(m: re.Match[str], text: str) -> str | None:
    family = _judge_value(m["key"], m["dq"], True, "assign", plain_ok=True)
    return None if family is None else _named_kind(family, "json-secret")


def _cli_password(m: re.Match[str], text: str) -> str | None:
    value = m["s"]
    if _rejected(value) or value.isdigit() or value.lower() in _EXAMPLE_PASSWORDS:
        return None
    return "password"


# "the password for staging is …", "my API key: …", 'use password "…"'
_PROSE = _lazy_re(
    r"(?<![A-Za-z0-9_.:-])(?P<name>(?i:password|passphrase|passwd|key|token|secret))"
    r"(?:[ \t]+(?:for|of|on|to|at|in)(?:[ \t]+[^\s:=\"'`]{1,30}){1,4}?)?"
    r"(?:[ \t]+(?:is|was)[ \t]+(?:now[ \t]+|still[ \t]+)?|[ \t]*[:=][ \t]*|[ \t]+(?=[\"'`]))"
    + _VALUE
)
_KEY_QUALIFIER = _lazy_re(r"(?i)(?<![a-z])(?:api|access|secret|private)[ _-]?\Z")
_NETRC = _lazy_re(r"password(?<![A-Za-z0-9_-]password)[ \t]+(?P<s>[^\s'\"]{4,512}+)")
_COOKIE = _lazy_re(r"[:;][ \t]*(?P<name>[A-Za-z0-9_.%-]{1,64}+)=(?P<s>[^;\s,\"'\\]{16,4096}+)")


def _prose(m: re.Match[str], text: str) -> str | None:
    _, value, quoted = _value(m)
    if _rejected(value, quoted) or _WORDY.match(value):
        return None
    name = m["name"].lower()
    if name == "key" and not _KEY_QUALIFIER.search(text, max(0, m.start() - 8), m.start()):
        return None  # "the key is …" could be anything; "the API key is …" is a secret
    if name in ("password", "passphrase", "passwd"):
        ok = _password_like(value) or (quoted and len(value) >= 4 and value == value.strip())
        return "password" if ok else None
    return "secret" if _random_like(value) else None


def _cookie(m: re.Match[str], text: str) -> str | None:
    return "cookie" if _random_like(m["s"]) or m["s"].startswith("eyJ") else None


_NAME_RULES: list[_Rule] = [
    _Rule("password", _XML, group="dq", judge=_xml, hints=("<",)),
    _Rule(
        "password",
        _DB_CLI,
        judge=_cli_password,
        hints=("mysql", "mariadb"),
        context=_lazy_re(r"\b(?:mysql\w*|mariadb\w*)\b"),
    ),
    _Rule(
        "password",
        _LOGIN_CLI,
        judge=_cli_password,
        hints=("login",),
        context=_lazy_re(r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm)\b[^\n]*\blogin\b"),
    ),
    _Rule(
        "password",
        _REDIS_CLI,
        judge=_cli_password,
        hints=("redis-cli",),
        context=_lazy_re(r"\bredis-cli\b"),
    ),
    _Rule("cli-secret", _FLAG, group=_VALUE_GROUPS, judge=_flag, hints=("-",)),
    _Rule("json-secret", _ASSIGN, group=_VALUE_GROUPS, judge=_assign, starts=_key_starts),
    _Rule(
        "secret",
        _PROSE,
        group=_VALUE_GROUPS,
        judge=_prose,
        starts=_gate_hits,
    ),
    _Rule(
        "password",
        _NETRC,
        judge=_cli_password,
        hints=("machine",),
        context=_lazy_re(r"\bmachine[ \t]+\S+[ \t]+login\b"),
    ),
    _Rule(
        "cookie",
        _COOKIE,
        judge=_cookie,
        hints=("cookie",),
        context=_lazy_re(r"(?i)(?<![a-z0-9_-])(?:set-)?cookie\\?[\"']?[ \t]*:"),
    ),
]

# --- AWS secret keys by shape -----------------------------------------------------------------

_AWS_SECRET = _lazy_re(
    r"(?<![A-Za-z0-9/+=_~.%@:-])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=_-]|\.[A-Za-z0-9])"
)
_PATHISH = _lazy_re(r"(?:^|/)[A-Za-z]{5,}(?:/|$).*/|/.*(?:^|/)[A-Za-z]{5,}(?:/|$)")


def _long_words(text: str) -> Iterable[tuple[int, int]]:
    """The words of 40 characters or more: the only places a 40-character key can be."""
    pos = 0
    for word in [w for w in text.split() if len(w) >= 40]:
        start = text.find(word, pos)
        pos = start + len(word)
        yield start, pos


def _aws_bare(m: re.Match[str], text: str) -> str | None:
    v = m["s"]
    if _mixed(v) and ("/" in v or "+" in v) and _entropy(v) >= 4.3 and not _PATHISH.search(v):
        return "aws-secret-key"
    return None


def _aws_near(m: re.Match[str], text: str) -> str | None:
    v = m["s"]
    return "aws-secret-key" if _mixed(v) and _entropy(v) >= 3.5 else None


_AWS_RULES: list[_Rule] = [
    _Rule("aws-secret-key", _AWS_SECRET, judge=_aws_bare, windows=_long_words),
    _Rule(
        "aws-secret-key",
        _AWS_SECRET,
        judge=_aws_near,
        windows=_long_words,
        hints=("aws", "amazon"),
        context=_lazy_re(r"(?i)(?<![a-z0-9])(?:aws|amazon)(?![a-z])"),
    ),
]

_RULES: list[_Rule] = [*_TOKEN_RULES, *_URL_RULES, *_NAME_RULES, *_AWS_RULES]
