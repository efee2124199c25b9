import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from facts_fresh5 import FACTS
WS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workspace")

def relpath(key):
    return "MEMORY.md" if key == "M" else "memory/2026-%s-%s.md" % (key[:2], key[2:])

_cache = {}
def lines(path):
    if path not in _cache:
        with open(os.path.join(WS, path), encoding="utf-8") as f:
            _cache[path] = f.read().split("\n")
    return _cache[path]

def resolve(slug):
    out = []
    for key, sub in FACTS[slug]:
        p = relpath(key)
        hits = [i + 1 for i, l in enumerate(lines(p)) if sub in l]
        if len(hits) != 1:
            raise SystemExit("fact %s: %r matches %d lines in %s" % (slug, sub, len(hits), p))
        out.append((p, hits[0]))
    out = sorted(set(out), key=lambda x: (x[0] != "MEMORY.md", x[0], x[1]))
    if len(out) != len(FACTS[slug]):
        raise SystemExit("fact %s: duplicate answer lines" % slug)
    return out

if __name__ == "__main__":
    used = set()
    for s in FACTS:
        for a in resolve(s):
            used.add(a)
    allb = []
    for p in ["MEMORY.md"] + ["memory/" + f for f in sorted(os.listdir(os.path.join(WS, "memory")))]:
        for i, l in enumerate(lines(p)):
            if l.startswith("- "):
                allb.append((p, i + 1))
    print("facts", len(FACTS), "bullets", len(allb), "covered", len(used & set(allb)))
    for b in allb:
        if b not in used:
            print("UNCOVERED", b, lines(b[0])[b[1] - 1])
