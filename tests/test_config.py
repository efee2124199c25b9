"""Settings: presets, overrides and one-line errors naming key, value and what is allowed."""

from __future__ import annotations

import pytest

from memcore.errors import ConfigError
from memcore.workspace.config import dreaming_settings, load_config
from memcore.workspace.core import Workspace


def settings(ws: Workspace, body: str):
    ws.config_path.write_text(body)
    return dreaming_settings(load_config(ws))


def test_defaults_without_file(ws: Workspace) -> None:
    s = dreaming_settings(load_config(ws))
    assert (
        s.mode,
        s.enabled,
        s.cron,
        s.min_score,
        s.min_recall_count,
        s.min_unique_queries,
        s.limit,
        s.max_entries,
    ) == ("off", False, None, 0.75, 3, 2, 10, 5000)


@pytest.mark.parametrize(
    ("mode", "cron", "score", "rc", "uq"),
    [
        ("core", "0 3 * * *", 0.75, 3, 2),
        ("rem", "0 */6 * * *", 0.85, 4, 3),
        ("deep", "0 */12 * * *", 0.80, 3, 3),
    ],
)
def test_presets(ws: Workspace, mode: str, cron: str, score: float, rc: int, uq: int) -> None:
    s = settings(ws, f'[dreaming]\nmode = "{mode}"\n')
    assert (s.cron, s.min_score, s.min_recall_count, s.min_unique_queries) == (cron, score, rc, uq)


def test_overrides_and_frequency_alias(ws: Workspace) -> None:
    s = settings(
        ws,
        '[dreaming]\nmode = "Core"\nfrequency = "15 4 * * *"\nmin_score = 0.5\n'
        'timezone = "Europe/Berlin"\nlimit = 0\n',
    )
    assert (s.mode, s.cron, s.min_score, s.timezone, s.limit) == (
        "core",
        "15 4 * * *",
        0.5,
        "Europe/Berlin",
        0,
    )


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('mode = "sometimes"', "mode = 'sometimes' is not allowed; allowed: off, core, rem, deep"),
        ("min_score = 1.5", "min_score = 1.5 is out of range; allowed: a number from 0 to 1"),
        ('min_score = "high"', "min_score = 'high' is not a number"),
        ("min_recall_count = 2.5", "min_recall_count = 2.5 is not a whole number"),
        ("limit = -1", "limit = -1 is out of range"),
        ('cron = "61 * * * *"', "cron = '61 * * * *' is not a valid cron expression"),
        ('timezone = "Mars/Olympus"', "timezone = 'Mars/Olympus' is not a known IANA timezone"),
        ("[dreaming.weights]\nnovelty = 1", "weights.novelty is not a signal"),
    ],
)
def test_invalid_values_name_key_value_and_range(ws: Workspace, body: str, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        settings(ws, f"[dreaming]\n{body}\n")
    msg = str(exc.value)
    assert "memcore.toml: [dreaming]" in msg and needle in msg
    assert "\n" not in msg


def test_broken_toml_names_the_file(ws: Workspace) -> None:
    with pytest.raises(ConfigError, match=r"memcore\.toml: invalid TOML"):
        settings(ws, "[dreaming\nmode=")
