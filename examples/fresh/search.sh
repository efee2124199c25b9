#!/usr/bin/env bash
# A new user's first searches on examples/fresh (daily notes, no recall store): copy the
# workspace, optionally seed it from the notes, search, and see when promotion starts.
#
#   bash examples/fresh/search.sh [--backfill]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ws="$(mktemp -d)/fresh"
cp -r "$here" "$ws"
rm -f "$ws/search.sh" "$ws/searches.txt" "$ws/facts.json"
export MEMCORE_WORKSPACE="$ws" MEMCORE_NOW="${MEMCORE_NOW:-2026-03-13T09:00:00Z}"

if [ "${1:-}" = "--backfill" ]; then
  memcore memory backfill          # preview: what recurs across the notes
  memcore memory backfill --apply  # seed it (undo: memcore memory backfill --rollback)
fi
n=0
while IFS= read -r query; do
  n=$((n + 1))
  echo "== search $n: $query"
  memcore memory search "$query" --limit 3
done <"$here/searches.txt"
memcore memory status | sed -n '/Not yet promoted/,$p'
memcore memory promote            # preview of what would be promoted
memcore memory promote --apply
echo "workspace: $ws"
