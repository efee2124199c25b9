"""Secret redaction: every secret shape goes, ordinary notes stay byte for byte, twice is once."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcore.redact as redact_module
from memcore.redact import KINDS, Finding, contains_secret, find_secrets, redact
from tests.secret_corpus import CLEAN, SECRETS

ROOT = Path(__file__).resolve().parent.parent


def test_corpus_is_large_and_uses_documented_kinds() -> None:
    assert len(SECRETS) >= 45 and len(CLEAN) >= 30
    kinds = {kind for _, _, kind in SECRETS}
    assert kinds <= set(KINDS)
    assert set(KINDS) == kinds  # every documented kind has at least one example
    doc = redact_module.__doc__ or ""
    assert all(f"``{kind}``" in doc for kind in KINDS)


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS, ids=[k for _, _, k in SECRETS])
def test_secret_is_redacted(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert redact(out) == out
    assert contains_secret(text) and not contains_secret(out)
    assert kind in {f.kind for f in find_secrets(text)}


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == [] and not contains_secret(text)


def test_keys_and_hosts_stay() -> None:
    assert redact('{"password": "Tr0ub4dor&3"}') == '{"password": "[REDACTED:password]"}'
    assert (
        redact("postgres://app:pa55w0rd@db.internal:5432/ledger")
        == "postgres://app:[REDACTED:url-credentials]@db.internal:5432/ledger"
    )
    assert (
        redact("redis://:r3dis-Pass@cache:6379") == "redis://:[REDACTED:url-credentials]@cache:6379"
    )
    assert (
        redact("Authorization: Bearer 7Hq2Lm9Xz4Vb8Nt3Rs6Kd1Fp")
        == "Authorization: Bearer [REDACTED:bearer-token]"
    )
    assert redact("export PGPASSWORD='s3cret-9'") == "export PGPASSWORD='[REDACTED:password]'"


def test_findings_are_spans_of_the_input() -> None:
    text = "a password=hunter2x and AKIAIOSFODNN7EXAMPLE, done"
    found = find_secrets(text)
    assert [(f.kind, text[f.start : f.end]) for f in found] == [
        ("password", "hunter2x"),
        ("aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
    ]
    assert dataclasses.is_dataclass(Finding)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found[0].kind = "x"  # type: ignore[misc]


def test_offsets_survive_characters_that_grow_when_lowered() -> None:
    text = "İstanbul İİ token: 9f3Kx2LmQ8vB7nZ4 and password=hunter2x"
    assert len(text.lower()) != len(text)
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == ["9f3Kx2LmQ8vB7nZ4", "hunter2x"]


def test_placeholders_and_references_stay() -> None:
    for text in [
        "password: <your password>",
        "API_TOKEN=${API_TOKEN}",
        'token = os.environ["API_TOKEN"]',
        "secret: ********",
        "OPENAI_API_KEY=sk-...",
        "password: [REDACTED:password]",
        "postgres://app:${DB_PASSWORD}@db/ledger",
        "https://user:pass@example.com (the textbook example)",
    ]:
        assert redact(text) == text, text


def test_whole_corpus_at_once() -> None:
    text = "\n".join([t for t, _, _ in SECRETS] + CLEAN)
    out = redact(text)
    assert all(secret not in out for _, secret, _ in SECRETS)
    assert all(line in out for line in CLEAN)
    assert redact(out) == out
    found = find_secrets(text)
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))
    rebuilt, pos = [], 0
    for f in found:
        rebuilt += [text[pos : f.start], f"[REDACTED:{f.kind}]"]
        pos = f.end
    assert "".join([*rebuilt, text[pos:]]) == out


def test_vendor_shape_wins_over_the_name() -> None:
    token = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert redact(f"GITHUB_TOKEN={token}") == "GITHUB_TOKEN=[REDACTED:github-token]"
    key = "sk-" + "ant-" + "api03-" + "Xq7Zr2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7Ru"
    assert redact(key) == "[REDACTED:anthropic-key]"  # not openai-key


def test_pem_block_cut_by_chunking() -> None:
    body = "MIIEowIBAAKCAQEAx7Zq2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7RuQw3ErTy8Ui4Op"
    head = f"key follows\n-----BEGIN PRIVATE KEY-----\n{body}\n{body[::-1]}"
    tail = f"{body}\n{body[::-1]}\n-----END PRIVATE KEY-----\nthen prose"
    assert redact(head) == "key follows\n[REDACTED:private-key]"
    assert redact(tail) == "[REDACTED:private-key]\nthen prose"


def test_compatible_with_the_sessions_module() -> None:
    """The cases the transcript redactor was tested with hold here too."""
    old = pytest.importorskip("memcore.sessions.redact")
    assert inspect.signature(old.redact) == inspect.signature(redact)
    for text, gone in [
        ("key " + "sk-" + "proj-abcdefghijklmnopqrstuvwx123 here", "abcdefghijklmnop"),
        ("token " + "gh" + "p_abcdefghijklmnopqrstuvwxyz0123456789", "p_abc"),
        ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("password = hunter2hunter", "hunter2hunter"),
        ("DB_PASSWORD: 's3cr3t-value'", "s3cr3t-value"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz"),
        ("postgres://app:pa55word@db.local/x", "pa55word"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "MIIEabc"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjg"),
    ]:
        out = redact(text)
        assert gone not in out and "[REDACTED" in out, text
    for text in ["daily_token_budget = 200000", "the token is expired", "auth is handled by nginx"]:
        assert redact(text) == text


def test_imports_nothing_from_memcore() -> None:
    tree = ast.parse(Path(redact_module.__file__).read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.split(".")[0] == "memcore"]


def test_example_workspace_notes_are_unchanged() -> None:
    notes = sorted((ROOT / "examples" / "workspace").glob("**/*.md"))
    if not notes:
        pytest.skip("no example workspace")
    changed = [p.name for p in notes if find_secrets(p.read_text(encoding="utf-8"))]
    assert changed == []


# --- properties -------------------------------------------------------------------------------

_PROSE = str.split(
    "the a we it is to of in on for and not rotate rotated monthly password passwords token"
    " tokens secret secrets key keys api bearer auth login aws policy requires characters"
    " staging prod deploy review memory notes stored vault port commit retry backoff Password"
    " Token Secret Bearer AWS API İstanbul café naïve 12 443 8080 2026 3600 1.4 0.9"
)
_PUNCT = [".", ",", ";", "(", ")", "!", "?"]


@st.composite
def _prose(draw: st.DrawFn) -> str:
    """Sentences of ordinary words: no ':', '=', '/', '-', '_' or '@', no word of 16 letters."""
    words = draw(st.lists(st.sampled_from(_PROSE), max_size=40))
    out = []
    for w in words:
        out.append(w + draw(st.sampled_from(["", "", "", *_PUNCT])))
    return draw(st.sampled_from([" ", "\n"])).join(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_prose())
def test_prose_without_secrets_is_unchanged(text: str) -> None:
    assert redact(text) == text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SECRETS), st.text(max_size=200), st.text(max_size=200))
def test_embedded_secret_never_leaks(entry: tuple[str, str, str], pre: str, post: str) -> None:
    text, secret, _ = entry
    out = redact(f"{pre}\n{text}\n{post}")
    assert secret not in out
    assert redact(out) == out


_PIECES = [t for t, _, _ in SECRETS] + CLEAN + [s for _, s, _ in SECRETS]
_GLUE = ["", " ", "\n", "\t", ",", ":", "=", '"', "'", "/", "@", "-", "_", "\\n", "&", "?"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.sampled_from(_PIECES), st.sampled_from(_GLUE), st.text(max_size=12)),
        max_size=8,
    )
)
def test_redact_is_idempotent(parts: list[str]) -> None:
    once = redact("".join(parts))
    assert redact(once) == once


# --- speed ------------------------------------------------------------------------------------


_MB = 1_000_000


def _noise() -> str:
    rng = random.Random(7)
    chars = string.ascii_letters + string.digits + "+/  \n"
    return "".join(rng.choice(chars) for _ in range(_MB))


def _rep(piece: str) -> str:
    return piece * (_MB // len(piece) + 1)


_ADVERSARIAL: dict[str, Callable[[], str]] = {
    "one long word": lambda: "a" * _MB,
    "gate words in one run": lambda: _rep("passwordtokenkey"),
    "open assignments": lambda: _rep("password="),
    "open quotes": lambda: _rep('"token": "'),
    "prose form": lambda: _rep("password is "),
    "unterminated PEM": lambda: _rep("-----BEGIN PRIVATE KEY-----\n"),
    "PEM ends": lambda: _rep("QUJD" * 20 + "\n-----END PRIVATE KEY-----\n"),
    "JWT starts": lambda: _rep("eyJabcdefgh."),
    "URL credentials": lambda: _rep("https://a:") + "@",
    "at signs": lambda: "x://u:" + "@" * _MB,
    "bearer": lambda: _rep("Bearer "),
    "flags": lambda: _rep("--token "),
    "markers": lambda: _rep("[REDACTED:password]"),
    "base64 noise": _noise,
    "aws line": lambda: "aws " + _rep("Zq7Xr2Lk9Vm4Np8Ws3Ty6Bd1Hf5Gj0Cx2Ae7Ru1b "),
    "many tokens": lambda: _rep("gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 "),
}


@pytest.mark.parametrize("name", list(_ADVERSARIAL))
def test_megabyte_of_adversarial_input_finishes(name: str) -> None:
    text = _ADVERSARIAL[name]()
    assert len(text) >= _MB
    assert isinstance(redact(text), str)


def test_every_deferred_pattern_compiles() -> None:
    """Patterns compile on first use; each one must still be a valid expression."""
    import memcore.redact as redact_module

    lazy = [v for v in vars(redact_module).values() if isinstance(v, redact_module._LazyPattern)]
    for rule in redact_module._RULES:
        lazy += [p for p in (rule.pattern, rule.context) if p is not None]
    assert len(lazy) > 40
    for pattern in lazy:
        assert pattern.pattern == pattern._args[0]  # compiles it (re.error if it is invalid)
