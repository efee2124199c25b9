"""``memcore review``: settle conflicts and detail-losing merges that wait for a human."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import (
    IntRange,
    NamedArgument,
    current_workspace,
    echo_json,
    json_option,
    lock_timeout_option,
)

CHOICES = ("a", "b", "both", "apply", "reject", "skip")


@click.command("review")
@click.argument("item_id", cls=NamedArgument, required=False, type=IntRange(min=1))
@click.argument(
    "choice", cls=NamedArgument, required=False, type=click.Choice(CHOICES, case_sensitive=False)
)
@lock_timeout_option()
@json_option
def review_cmd(item_id: int | None, choice: str | None, lock_timeout: float, as_json: bool) -> None:
    """Settle conflicts and detail-losing merges that wait for a human.

    With no arguments it asks about each item; `memcore review ID CHOICE` settles one
    (A/B/both/skip for a conflict, apply/reject/skip for a merge; "both" keeps both entries
    as they are, journaled, and the pair is not proposed again); --json lists them.

    \b
    Examples:
      memcore review                       # ask about each waiting item
      memcore review 3 B                   # keep B of conflict 3
      memcore review 4 both                # keep both entries of item 4
    """
    from memcore.dream import review
    from memcore.workspace.clock import utcnow

    ws = current_workspace()
    if item_id is not None:
        if not choice:
            raise click.UsageError(
                "give a choice: A, B, both or skip (conflict); apply, reject or skip (merge)"
            )
        res = review.resolve(ws, item_id, choice, now=utcnow(), lock_timeout=lock_timeout)
        if as_json:
            echo_json(res)
        else:
            click.echo(
                f"Review item {item_id}: {res['status']}"
                + (f" (run {res['runId']})" if res["runId"] else "")
            )
        return
    items = review.pending(ws)
    if as_json:
        echo_json({"items": items})
        return
    if not items:
        click.echo("Nothing waits for review.")
        return
    done = 0
    for it in items:
        click.echo(_describe(it))
        try:
            answer = _ask_item(it)
        except click.Abort:
            click.echo("Stopped.")
            break
        if answer == "skip":
            continue
        review.resolve(ws, it["itemId"], answer, now=utcnow(), lock_timeout=lock_timeout)
        done += 1
    click.echo(f"Review: {done} settled, {len(review.pending(ws))} waiting.")


def _describe(it: dict[str, Any]) -> str:
    if it["kind"] == "conflict":
        hint = {"a": "keep A", "b": "keep B", "both": "keep both"}.get(it.get("suggested") or "")
        return (
            f'#{it["itemId"]} conflict — "{it["topic"]}" ({it["reason"]})\n'
            f"  A [{it['a']['id']}] {it['a']['text'][:100]}\n"
            f"  B [{it['b']['id']}] {it['b']['text'][:100]}"
            + (f"\n  suggested: {hint}" if hint else "")
        )
    ids = " + ".join(f"[{x['id']}]" for x in [it["keeper"], *it["absorbed"]])
    return f'#{it["itemId"]} merge {ids}\n  → "{it["text"][:100]}"'


def _ask_item(it: dict[str, Any]) -> str:
    allowed = it["choices"]
    suffix = " [A/B/both/skip] " if it["kind"] == "conflict" else " [apply/reject/skip] "
    while True:
        answer = click.prompt("  Choice", default="skip", show_default=False, prompt_suffix=suffix)
        answer = answer.strip().lower()
        if answer in allowed:
            return answer
        click.echo(f"  Please answer one of: {', '.join(allowed)}.")
