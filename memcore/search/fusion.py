"""Fusing the lexical and semantic signals of a hit into one calibrated score.

A hit has up to three signals, each a function of the query, the chunk and corpus statistics
(never of the other hits, so a score does not depend on what else was found):

* ``lexical``: FTS5 bm25 coverage of the query's terms times the query's specificity (see
  ``memcore.search.query``), in [0, 1];
* ``hashed``: the calibrated cosine of the hashing vectors (words and character n-grams), in
  [0, 1];
* ``dense``: the cosine of the search model's vectors (absent with the hashing backend);
* the chunk's place among all chunks by bm25 and by model cosine, as ``3 / (2 + place)``
  (1 for the first, 0 when not ranked): the reciprocal-rank part of the fusion;
* the query's ``specificity`` (how few chunks its words single out; 0 without a lexical
  match), so that a bare broad word scores low everywhere;
* with a second model (``memcore.search.companion``: MiniLM beside use-m3), its cosine of the
  chunk's whole text (``second``) and the chunk's place by it (``second_rank``, as above);
* whether the query is a ``single_term`` (one word once stop words are dropped): a bare word
  names a topic rather than asks for a fact, so with a model (whose nearest chunk always
  looks near) its hits score low; the place among the hits is unchanged.

The score is a logistic model of "this chunk answers the query"::

    score = 1 / (1 + exp(-(b + w_lex * lexical + w_hash * hashed + w_dense * dense
                             + w_lrank * lexical_place + w_drank * dense_place
                             + w_second * second + w_srank * second_place
                             + w_spec * specificity + w_single * single_term)))

with one coefficient set per backend (and per pair of models), fitted on the labelled query
sets of bench/eval/search (``python bench/fit_search.py``; BENCHMARKS.md, "Memory search"). So
a score reads the same across queries and workspaces: about the share of hits at that score
that were right on those queries. It is capped at ``CAP`` (0.999); 1.000 is kept for a chunk
whose text is exactly the query (an exact duplicate), so ties at the top mean the same text. A
model neighbour that shares no word with the query is returned only from ``MIN_SCORE`` on: a
query the notes do not answer finds nothing rather than the least bad chunks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

CAP = 0.999
MIN_SCORE = 0.01


@dataclass(frozen=True)
class Calibration:
    """Logistic coefficients of one backend."""

    bias: float
    lexical: float
    hashed: float
    dense: float = 0.0
    lexical_rank: float = 0.0
    dense_rank: float = 0.0
    specificity: float = 0.0
    single_term: float = 0.0
    dense_floor: float = 0.0  # cosine below which a model neighbour is not a candidate
    second: float = 0.0  # the second model's cosine (a pair of models only)
    second_rank: float = 0.0


# Fitted with bench/fit_search.py (see the module docstring): the model backends on every
# development query (queries.jsonl and fresh.jsonl; single_term last, the others held), the
# pair use-m3 + MiniLM on the English sentences among them and fresh3.jsonl (the queries it
# is asked about, memcore.search.companion), hashing on the tune half of queries.jsonl
# (its fit on every query ranked the same and scored side hits higher, which let the second
# copy of a repeated fact past the promotion gates in examples/fresh).
CALIBRATIONS: dict[str, Calibration] = {
    "hashing": Calibration(
        bias=-14.516, lexical=3.196, hashed=2.489, lexical_rank=1.523, specificity=9.745
    ),
    "minilm": Calibration(
        bias=-6.857,
        lexical=1.686,
        hashed=0.336,
        dense=2.719,
        lexical_rank=1.074,
        dense_rank=5.457,
        specificity=-0.913,
        single_term=-4.965,
    ),
    "use-m3+minilm": Calibration(
        bias=-8.309,
        lexical=1.717,
        hashed=-0.165,
        dense=4.236,
        lexical_rank=-0.427,
        dense_rank=2.381,
        specificity=-1.248,
        single_term=-0.513,
        second=2.327,
        second_rank=5.954,
    ),
    "use-m3": Calibration(
        bias=-7.489,
        lexical=2.625,
        hashed=0.151,
        dense=4.881,
        lexical_rank=0.341,
        dense_rank=5.543,
        specificity=-0.591,
        single_term=-5.239,
    ),
}


def calibration_for(backend_id: str) -> Calibration:
    """The coefficients of a backend id (``hashing-v1-4096``, ``use-m3-...``, ``minilm-...``),
    or of a pair of models (``use-m3-...+minilm-...``, see ``companion.paired_id``)."""
    parts = backend_id.split("+")
    for name, cal in CALIBRATIONS.items():
        names = name.split("+")
        if len(names) == len(parts) and all(
            p.startswith(n) for p, n in zip(parts, names, strict=True)
        ):
            return cal
    if len(parts) > 1:  # a pair without a calibration of its own: the first model's
        return calibration_for(parts[0])
    return CALIBRATIONS["hashing"]


def place(rank: int) -> float:
    """The reciprocal-rank feature of a 1-based place (0: not ranked)."""
    return 3.0 / (2.0 + rank) if rank > 0 else 0.0


def fused_score(
    cal: Calibration,
    lexical: float,
    hashed: float,
    dense: float | None,
    lexical_rank: int = 0,
    dense_rank: int = 0,
    specificity: float = 0.0,
    single_term: bool = False,
    second: float | None = None,
    second_rank: int = 0,
) -> float:
    """The calibrated probability-like score of one hit, in [0, CAP]."""
    z = cal.bias + cal.lexical * lexical + cal.hashed * hashed + cal.specificity * specificity
    if second is not None:
        z += cal.second * second + cal.second_rank * place(second_rank)
    if single_term:
        z += cal.single_term
    z += cal.lexical_rank * place(lexical_rank) + cal.dense_rank * place(dense_rank)
    if dense is not None:
        z += cal.dense * dense
    p = 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0
    return min(CAP, max(0.0, p))


_NORM_RE = re.compile(r"[\W_]+", re.UNICODE)


def normalized(text: str) -> str:
    """Text compared for exact duplicates: lower-cased words, list markers and punctuation
    dropped."""
    return " ".join(_NORM_RE.sub(" ", text.lower()).split())


def is_exact(query: str, chunk_text: str) -> bool:
    """Whether the chunk says exactly the query (the only case that scores 1.000)."""
    if not query.strip() or len(chunk_text) > 2 * len(query) + 8:
        return False  # cheap: far longer text cannot be the same words
    q = normalized(query)
    return bool(q) and q == normalized(chunk_text)
