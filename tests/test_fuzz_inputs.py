"""Hostile input never gives a traceback: ``memory record`` input, the recall store file and
memcore.toml are fuzzed; every outcome is either success or one MemcoreError line."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomlkit
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore.cli import cli
from memcore.errors import ConfigError, MemcoreError
from memcore.workspace.core import Workspace

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2**63 - 1, 2**63, 1e19, -1, 1.5]),
)
paths = st.one_of(
    st.sampled_from(
        [
            "memory/2026-11-20.md",
            "/tmp/other/memory/2026-11-20.md",
            "../x/memory/2026-11-20.md",
            "memory/../../memory/2026-11-20.md",
            "2026-11-20.md",
            "memory/link.md",
            "MEMORY.md",
            "memory/2026-11-20.md\x00",
            "",
        ]
    ),
    st.text(max_size=40),
)
json_scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=30))
hit = st.fixed_dictionaries(
    {},
    optional={
        "path": st.one_of(paths, json_scalars),
        "startLine": st.one_of(numbers, json_scalars),
        "endLine": st.one_of(numbers, json_scalars),
        "score": st.one_of(numbers, json_scalars),
        "snippet": st.one_of(st.text(max_size=200), json_scalars),
        "source": st.sampled_from(["memory", "sessions", 3, None]),
    },
)


def _workspace(root: Path) -> Workspace:
    if root.exists():
        shutil.rmtree(root)
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Long-Term Memory\n", encoding="utf-8")
    (root / "memory" / "2026-11-20.md").write_text(
        "# Notes\n\n- The billing cron runs at 02:00 UTC.\n- Staging uses Postgres 16.\n",
        encoding="utf-8",
    )
    return Workspace(root)


def _run(ws: Workspace, *args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["-w", str(ws.root), *args], input=stdin)


def _no_traceback(res: Any) -> None:
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in (res.stdout + res.stderr)
    if res.exit_code != 0:
        lines = res.stderr.strip().splitlines()
        assert lines and lines[-1].startswith("Error: "), res.stderr


@FUZZ
@given(results=st.lists(hit, max_size=4), query=st.text(min_size=0, max_size=30))
def test_record_input_never_tracebacks(tmp_path: Path, results: list[Any], query: str) -> None:
    ws = _workspace(tmp_path / "ws")
    res = _run(ws, "memory", "record", "--query", query or " ", stdin=json.dumps(results))
    _no_traceback(res)
    assert res.exit_code in (0, 1, 2)
    if ws.store_path.exists():  # whatever was recorded names a note inside the workspace
        for e in json.loads(ws.store_path.read_text())["entries"].values():
            assert not e["path"].startswith("/") and ".." not in e["path"].split("/")
            assert 1 <= e["startLine"] < 2**63


store_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
entry = st.fixed_dictionaries(
    {
        "path": st.one_of(paths, json_scalars),
        "startLine": st.one_of(numbers, json_scalars),
        "endLine": st.one_of(numbers, json_scalars),
        "source": st.sampled_from(["memory", "x", None]),
    },
    optional={
        "recallCount": st.one_of(numbers, json_scalars),
        "totalScore": st.one_of(numbers, json_scalars),
        "maxScore": st.one_of(numbers, json_scalars),
        "queryHashes": st.one_of(st.lists(st.text(max_size=12), max_size=4), store_values),
        "userQueryHashes": st.one_of(st.lists(st.text(max_size=12), max_size=4), store_values),
        "promotedAt": st.one_of(st.sampled_from(["2026-11-20T00:00:00.000Z"]), store_values),
        "lastRecalledAt": st.one_of(st.sampled_from(["2026-11-20T00:00:00.000Z"]), store_values),
        "snippet": st.one_of(st.text(max_size=60), json_scalars),
    },
)
store_docs = st.one_of(
    st.fixed_dictionaries(
        {"version": st.just(1), "entries": st.dictionaries(st.text(max_size=40), entry, max_size=4)}
    ),
    store_values,
)


@FUZZ
@given(doc=store_docs)
def test_a_foreign_store_never_breaks_a_command(tmp_path: Path, doc: Any) -> None:
    ws = _workspace(tmp_path / "ws")
    ws.ensure_dreams_dir()
    ws.store_path.write_bytes(json.dumps(doc, allow_nan=True).encode())
    for args in (
        ("memory", "status"),
        ("memory", "promote"),
        ("memory", "promote", "--apply"),
        ("memory", "status", "--fix"),
    ):
        _no_traceback(_run(ws, *args))
    hits = [{"path": "memory/2026-11-20.md", "startLine": 3, "endLine": 3, "score": 0.9}]
    res = _run(ws, "memory", "record", "--query", "billing", stdin=json.dumps(hits))
    _no_traceback(res)
    assert res.exit_code == 0


toml_values = st.one_of(
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=40),
    st.sampled_from(
        ["America", "x" * 300, "Europe/", "../etc", "UTC", "0 3 * * *", "* * *", "0 0 30 2 *"]
    ),
    st.sampled_from([10**309, -(10**309), 2**63, 1e308, 12]),
    st.lists(st.integers(), max_size=2),
)
TABLES = {
    "dreaming": [
        "mode", "cron", "frequency", "timezone", "limit", "min_score", "min_recall_count",
        "min_unique_queries", "recency_half_life_days", "max_entries",
    ],
    "search": ["record"],
    "memory": ["budget_chars", "versions", "max_loss_fraction"],
    "consolidation": ["similarity", "decay_half_life_days", "forget_below", "min_age_days"],
    "sessions": ["raw_idle_days", "memory_load_budget", "budget_usd", "timezone"],
    "llm": ["base_url", "model", "timeout", "api_key_env"],
}  # fmt: skip


@FUZZ
@given(
    picks=st.lists(
        st.tuples(st.sampled_from(sorted(TABLES)), st.integers(0, 9), toml_values), max_size=4
    )
)
def test_config_values_give_one_line_errors(tmp_path: Path, picks: list[Any]) -> None:
    from memcore.dream.settings import consolidation_settings, retention_settings
    from memcore.judge.llm import llm_settings
    from memcore.promotion.budget import budget_chars
    from memcore.sessions.settings import sessions_settings
    from memcore.workspace.config import dreaming_settings, load_config

    ws = _workspace(tmp_path / "ws")
    doc = tomlkit.document()
    for table, i, value in picks:
        keys = TABLES[table]
        if table not in doc:
            doc[table] = tomlkit.table()
        try:
            doc[table][keys[i % len(keys)]] = value  # type: ignore[index]
        except (ValueError, TypeError, OverflowError):
            continue
    ws.config_path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    for fn in (
        dreaming_settings,
        consolidation_settings,
        retention_settings,
        sessions_settings,
        llm_settings,
    ):
        try:
            fn(load_config(ws))
        except ConfigError as exc:
            assert "\n" not in str(exc) and "memcore.toml" in str(exc)
    try:
        budget_chars(ws)
    except MemcoreError as exc:
        assert "\n" not in str(exc)
    _no_traceback(_run(ws, "memory", "status"))
