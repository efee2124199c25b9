"""A warning about a value of openclaw.json names the key the value was read from: the
timezone from ``agents.defaults.userTimezone``, the cadence from ``frequency``, a gate from
``phases.deep`` (a user who changes the named key fixes the value that was read)."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.workspace.openclaw_config import KEY, read_dreaming


def test_each_warning_names_the_key_its_value_came_from(tmp_path: Path) -> None:
    cfg = tmp_path / "openclaw.json"
    doc = {
        "agents": {"defaults": {"userTimezone": "Mars/Olympus"}},
        "plugins": {
            "entries": {
                "memory-core": {
                    "config": {
                        "dreaming": {
                            "mode": "core",
                            "frequency": "every day",
                            "phases": {"deep": {"minScore": 7}},
                        }
                    }
                }
            }
        },
    }
    cfg.write_text(json.dumps(doc))
    before = cfg.read_bytes()
    out = read_dreaming(cfg)
    text = "\n".join(out.warnings)
    assert f"{cfg} agents.defaults.userTimezone = 'Mars/Olympus' is not a known IANA" in text
    assert f"{cfg} {KEY}.frequency = 'every day' is not a valid cron" in text
    assert f"{cfg} {KEY}.phases.deep.minScore = 7 is not allowed; allowed: a number" in text
    assert len(out.warnings) == 3 and out.table == {"mode": "core"}
    assert cfg.read_bytes() == before

    doc["plugins"]["entries"]["memory-core"]["config"]["dreaming"] = {
        "timezone": "Nowhere/Else",
        "cron": "nope",
        "minScore": 2,
    }
    cfg.write_text(json.dumps(doc))
    text = "\n".join(read_dreaming(cfg).warnings)
    assert f"{KEY}.timezone = 'Nowhere/Else'" in text and "userTimezone" not in text
    assert f"{KEY}.cron = 'nope'" in text and f"{KEY}.minScore = 2" in text
