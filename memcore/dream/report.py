"""The consolidation report and the summary lines, as pure text from a plan."""

from __future__ import annotations

import difflib
from typing import Any

from memcore.dream.plan import Plan

NOTHING = "Dream complete. No duplicate, contradictory, or stale memories found."
CANCELLED = "Cancelled. No changes made."
TEXT_LIMIT = 100


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """Text cut to ``limit`` characters (an ellipsis marks the cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def report_lines(plan: Plan, *, with_prompt: bool = True) -> list[str]:
    """The report in its fixed shape (promotions, merges, conflicts, prunes); empty sections
    are left out."""
    if plan.empty():
        return [NOTHING]
    out = ["## dream — consolidation report", ""]
    if plan.promotions:
        out.append(f"Promotions ({len(plan.promotions)}):")
        for p in plan.promotions:
            out.append(f'  [{p["id"]}] ← "{cut(p.get("snippet") or "")}"')
        out.append("")
    if plan.merges:
        out.append(f"Merges ({len(plan.merges)}):")
        for m in plan.merges:
            ids = " + ".join(f"[{i}]" for i in [m.keeper, *m.absorbed])
            out.append(f'  {ids} → "{cut(m.text)}"')
        out.append("")
    if plan.supersedes:
        out.append(f"Superseded ({len(plan.supersedes)}):")
        for s in plan.supersedes:
            out.append(f'  [{s.older}] → superseded by [{s.newer}] — "{cut(s.reason, 80)}"')
        out.append("")
    if plan.conflicts:
        out.append(f"Conflicts ({len(plan.conflicts)}):")
        for c in plan.conflicts:
            out.append(f'  [{c.a}] vs [{c.b}] — "{cut(c.topic)}" [A/B/skip]')
        out.append("")
    if plan.prunes:
        out.append(f"Prune ({len(plan.prunes)}):")
        for prune in plan.prunes:
            out.append(f"  [{prune.id}] — {prune.type}, {prune.age_days}d old")
        out.append("")
    if with_prompt:
        out.append(proposed_line(plan))
    return out


def proposed_line(plan: Plan) -> str:
    """The question: every kind of change the run makes, promotions included."""
    return (
        f"Proposed: {len(plan.promotions)} promotions, {len(plan.merges)} merges, "
        + (f"{len(plan.supersedes)} superseded, " if plan.supersedes else "")
        + f"{len(plan.prunes)} prunes, {len(plan.conflicts)} conflicts. Apply? [Y/n]"
    )


def complete_line(result: dict[str, Any]) -> str:
    line = (
        f"Dream complete — promoted: {result['promoted']}, merged: {result['merged']}, "
        f"pruned: {result['forgotten']}, conflicts resolved: {result['conflictsResolved']}, "
        f"skipped: {result['conflictsSkipped']}"
    )
    return line + _held_back(result)


def auto_line(workspace: str, result: dict[str, Any]) -> str:
    line = (
        f"[memcore-dream --auto] workspace={workspace} promoted={result['promoted']} "
        f"merged={result['merged']} pruned={result['forgotten']} "
        f"conflicts_skipped={result['conflictsSkipped']}"
    )
    return line + _held_back(result, auto=True)


def _held_back(result: dict[str, Any], auto: bool = False) -> str:
    promotion = result.get("promotion") or {}
    held = len(promotion.get("heldBack") or [])
    reinforced = len(promotion.get("reinforced") or [])
    out = ""
    if reinforced:
        out += f" reinforced={reinforced}" if auto else f", reinforced: {reinforced}"
    if held:
        out += f" held_back={held}" if auto else f", held back (budget): {held}"
    return out


def reminder_line(waiting: int) -> str:
    noun = "item waits" if waiting == 1 else "items wait"
    return (
        f"memcore: {waiting} {noun} for review (conflicts or merges that would lose a detail): "
        "run `memcore review`"
    )


def unified_diff(before: str, after: str, name: str = "MEMORY.md") -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


def plan_json(plan: Plan) -> dict[str, Any]:
    """The proposals of a plan as JSON (keys are an API)."""
    return {
        "promotions": plan.promotions,
        "merges": [
            {
                "keeper": m.keeper,
                "absorbed": m.absorbed,
                "text": m.text,
                "lossy": m.lossy,
                "missing": m.missing,
                "similarity": round(m.similarity, 4),
                "byModel": m.by_model,
                "reason": m.reason,
            }
            for m in plan.merges
        ],
        "supersedes": [
            {"older": s.older, "newer": s.newer, "reason": s.reason, "confidence": s.confidence}
            for s in plan.supersedes
        ],
        "skipped": plan.skipped,
        "conflicts": [
            {
                "a": c.a,
                "b": c.b,
                "topic": c.topic,
                "reason": c.reason,
                "suggested": c.suggested,
                "verdict": c.verdict,
                "confidence": round(c.confidence, 3),
                "similarity": round(c.similarity, 4),
                "aText": c.a_text,
                "bText": c.b_text,
            }
            for c in plan.conflicts
        ],
        "prunes": [
            {"id": p.id, "type": p.type, "ageDays": p.age_days, "reason": p.reason}
            for p in plan.prunes
        ],
        "decays": [
            {"id": d.entry_id, "before": d.before.importance, "after": d.after.importance}
            for d in plan.decays
        ],
    }


def planned_text(plan: Plan) -> str:
    """MEMORY.md as it would be with every merge and prune of ``plan`` (for ``--diff``)."""
    from memcore.dream.apply import with_text
    from memcore.workspace.entries import render

    index = {e.id: i for i, e in enumerate(plan.doc.entries)}
    edits: dict[int, str | None] = {}
    for m in plan.merges:
        if m.op.new_text is not None and m.keeper in index:
            edits[index[m.keeper]] = with_text(plan.doc.entries[index[m.keeper]], m.op.new_text)
        for a in m.absorbed:
            edits[index[a]] = None
    for s in plan.supersedes:
        edits[index[s.older]] = None
    for p in plan.prunes:
        edits[index[p.id]] = None
    return render(plan.doc, edits)
