"""Build the labelled consolidation evaluation workspace from ``dream_facts.py``.

``build(root, now)`` writes ``root/MEMORY.md`` (entries in a fixed shuffled order, under a few
sections, each behind a marker naming its id, type, scope and creation date), fills the ledger
for stale and pinned items, and returns the labels: roles of every entry, the true duplicate
pairs, near-miss / contradiction / cross-scope pairs, questions (answer substrings that must
survive), and the stale ids expected to be forgotten.
"""

from __future__ import annotations

import itertools
import random
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from dream_facts import FACTS, PINNED, SINGLES, STALE  # noqa: E402

from memcore.recall import ledger  # noqa: E402
from memcore.recall.ledger import Meta  # noqa: E402
from memcore.workspace.clock import iso_ms  # noqa: E402
from memcore.workspace.core import Workspace, atomic_write_text  # noqa: E402
from memcore.workspace.markdown import format_marker  # noqa: E402

TYPES = ("fact", "preference", "convention", "decision")
CROSS_SCOPE_EVERY = 11  # every 11th fact also has a copy in another scope (must never merge)


@dataclass
class Labels:
    role: dict[str, tuple[str, int]] = field(default_factory=dict)  # id -> (role, fact index)
    dup_pairs: set[frozenset[str]] = field(default_factory=set)
    near_pairs: set[frozenset[str]] = field(default_factory=set)
    contra_pairs: set[frozenset[str]] = field(default_factory=set)
    cross_scope_pairs: set[frozenset[str]] = field(default_factory=set)
    questions: list[tuple[str, str]] = field(default_factory=list)  # (entry id, answer)
    stale: set[str] = field(default_factory=set)
    pinned: set[str] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)


def build(root: Path, now: datetime) -> Labels:
    """Write the evaluation workspace into ``root`` and return its labels."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "memory").mkdir(exist_ok=True)
    ws = Workspace(root)
    lab = Labels()
    rows: list[tuple[str, str, dict[str, str]]] = []  # (id, text, marker attrs)
    old = now - timedelta(days=400)
    for i, (base, edit, para, contra, near, ans, near_ans) in enumerate(FACTS):
        typ = TYPES[i % len(TYPES)]
        scope = "global" if i % 3 == 0 else "project"
        created = now - timedelta(days=120 - i)
        cluster = []
        for role, text, days in (("base", base, 0), ("edit", edit, 5), ("para", para, 9)):
            if not text:
                continue
            eid = f"f{i:02d}-{role}"
            rows.append(
                (
                    eid,
                    text,
                    {
                        "id": eid,
                        "type": typ,
                        "scope": scope,
                        "created": iso_ms(created + timedelta(days=days)),
                    },
                )
            )
            lab.role[eid] = (role, i)
            cluster.append(eid)
        for a, b in itertools.combinations(cluster, 2):
            lab.dup_pairs.add(frozenset((a, b)))
        lab.questions.append((f"f{i:02d}-base", ans))
        if contra and i % 2 == 0:
            eid = f"f{i:02d}-contra"
            rows.append(
                (
                    eid,
                    contra,
                    {
                        "id": eid,
                        "type": typ,
                        "scope": scope,
                        "created": iso_ms(created + timedelta(days=20)),
                    },
                )
            )
            lab.role[eid] = ("contra", i)
            for c in cluster:
                lab.contra_pairs.add(frozenset((c, eid)))
        if near:
            eid = f"f{i:02d}-near"
            rows.append(
                (
                    eid,
                    near,
                    {
                        "id": eid,
                        "type": typ,
                        "scope": scope,
                        "created": iso_ms(created + timedelta(days=3)),
                    },
                )
            )
            lab.role[eid] = ("near", i)
            lab.questions.append((eid, near_ans))
            for c in cluster:
                lab.near_pairs.add(frozenset((c, eid)))
        if i % CROSS_SCOPE_EVERY == 0:
            eid = f"f{i:02d}-xscope"
            other = "session" if scope == "project" else "project"
            rows.append(
                (eid, base, {"id": eid, "type": typ, "scope": other, "created": iso_ms(created)})
            )
            lab.role[eid] = ("xscope", i)
            lab.questions.append((eid, ans))
            for c in cluster:
                lab.cross_scope_pairs.add(frozenset((c, eid)))
    for k, (text, ans) in enumerate(SINGLES):
        eid = f"single-{k:02d}"
        rows.append(
            (
                eid,
                text,
                {
                    "id": eid,
                    "type": TYPES[k % 4],
                    "scope": "project",
                    "created": iso_ms(now - timedelta(days=60 + k)),
                },
            )
        )
        lab.role[eid] = ("single", -1)
        lab.questions.append((eid, ans))
    for k, (text, typ) in enumerate(STALE):
        eid = f"stale-{k:02d}"
        attrs = {"id": eid, "type": typ, "scope": "project", "created": iso_ms(old)}
        if typ == "unknown":
            attrs["confidence"] = "0.2"
        rows.append((eid, text, attrs))
        lab.role[eid] = ("stale", -1)
        lab.stale.add(eid)
    for k, (text, ans) in enumerate(PINNED):
        eid = f"pin-{k:02d}"
        typ = "session_state" if k % 2 else "fact"
        rows.append(
            (
                eid,
                text,
                {
                    "id": eid,
                    "pinned": "true",
                    "type": typ,
                    "scope": "global",
                    "created": iso_ms(old),
                    "confidence": "0.2",
                },
            )
        )
        lab.role[eid] = ("pinned", -1)
        lab.pinned.add(eid)
        lab.questions.append((eid, ans))
    random.Random(7).shuffle(rows)
    sections = ("Project", "People", "Preferences", "Operations", "Notes")
    out = ["# Long-Term Memory", ""]
    per = (len(rows) + len(sections) - 1) // len(sections)
    for s, name in enumerate(sections):
        out += [f"## {name}", ""]
        for eid, text, attrs in rows[s * per : (s + 1) * per]:
            out.append(format_marker(attrs))
            out.append(f"- {text}")
            lab.texts[eid] = text
        out.append("")
    atomic_write_text(ws.memory_md, "\n".join(out))
    # Ledger: stale 'fact' items idle and unimportant; pinned ones too (they must survive).
    metas = []
    for eid in sorted(lab.stale | lab.pinned):
        metas.append(
            Meta(
                id=eid,
                importance=0.08,
                created_at=iso_ms(old),
                last_accessed_at=iso_ms(old),
                access_count=0,
            )
        )
    with ledger.connect(ws) as conn:
        ledger.save(conn, metas)
    return lab


def labelled_pairs(lab: Labels) -> list[tuple[str, str, str]]:
    """(id a, id b, label) for calibration: neardup, para, contra, near, xscope, unrelated."""
    out: list[tuple[str, str, str]] = []
    for p in sorted(lab.dup_pairs, key=sorted):
        a, b = sorted(p)
        kinds = {lab.role[a][0], lab.role[b][0]}
        out.append((a, b, "para" if "para" in kinds else "neardup"))
    for label, pairs in (
        ("contra", lab.contra_pairs),
        ("near", lab.near_pairs),
        ("xscope", lab.cross_scope_pairs),
    ):
        out.extend((*sorted(p), label) for p in sorted(pairs, key=sorted))  # type: ignore[misc]
    bases = sorted(e for e, (r, _) in lab.role.items() if r == "base")
    for k, a in enumerate(bases):
        b = bases[(k + 7) % len(bases)]
        out.append((a, b, "unrelated"))
    return out
