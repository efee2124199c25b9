"""A SentencePiece unigram model (``.model`` file) as a Rust ``tokenizers`` tokenizer.

Why: the multilingual backend's vocabulary ships as a SentencePiece protobuf. The Rust
``tokenizers`` package (already in the ``embed`` extra) runs a unigram model several times
faster than a Python Viterbi, and needs no ``sentencepiece`` or ``protobuf`` package: this
module reads the few protobuf fields that matter itself.

Conversion: every piece keeps its id and score; control pieces (``<s>``, ``</s>``) get a score
no segmentation ever prefers, because SentencePiece never produces them from text; the
normaliser is the model's precompiled character map, then runs of spaces collapse and the
ends are stripped (SentencePiece's ``remove_extra_whitespaces``); words get the ``▁`` prefix
(``add_dummy_prefix``). Building takes seconds (128k pieces), so :func:`load` keeps the built
``tokenizer.json`` in a cache folder, named after the model file's sha256.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: Bumped when the conversion changes, so an old cached tokenizer.json is never reused.
BUILD_VERSION = 1

_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_NEVER = -1.0e6  # score of a piece SentencePiece never emits from text


@dataclass(frozen=True)
class SentencePieceModel:
    """What a unigram ``.model`` file holds that tokenisation needs."""

    pieces: list[tuple[str, float, int]]  # (piece, score, type) in id order
    charsmap: bytes  # the normaliser's precompiled character map
    unk_id: int
    bos_id: int
    eos_id: int
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(buf: bytes, lo: int, hi: int) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of one protobuf message: ints for varints, bytes otherwise."""
    i = lo
    while i < hi:
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, value
        elif wire == 2:
            size, i = _varint(buf, i)
            yield number, buf[i : i + size]
            i += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, buf[i : i + width]
            i += width
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    if i != hi:
        raise ValueError("truncated protobuf message")


def _int(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ValueError("expected a varint field")
    return value - (1 << 64) if value >= 1 << 63 else value


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ValueError("expected a length-delimited field")
    return value


def parse_model(data: bytes) -> SentencePieceModel:
    """Parse a SentencePiece ``ModelProto``; ValueError when it is not a unigram model."""
    pieces: list[tuple[str, float, int]] = []
    trainer: dict[int, int] = {}
    normalizer: dict[int, int | bytes] = {}
    for number, value in _fields(data, 0, len(data)):
        if number == 1:  # SentencePiece {1: piece, 2: score (float), 3: type}
            body = _bytes(value)
            piece, score, kind = "", 0.0, _NORMAL
            for n, v in _fields(body, 0, len(body)):
                if n == 1:
                    piece = _bytes(v).decode("utf-8")
                elif n == 2:
                    score = struct.unpack("<f", _bytes(v))[0]
                elif n == 3:
                    kind = _int(v)
            pieces.append((piece, score, kind))
        elif number == 2:  # TrainerSpec: model_type 3, unk/bos/eos ids 40-42
            body = _bytes(value)
            ints = ((n, v) for n, v in _fields(body, 0, len(body)) if isinstance(v, int))
            trainer.update((n, _int(v)) for n, v in ints)
        elif number == 3:  # NormalizerSpec
            body = _bytes(value)
            normalizer.update(_fields(body, 0, len(body)))
    if not pieces:
        raise ValueError("no pieces in the SentencePiece model")
    if trainer.get(3, 1) != 1:
        raise ValueError(f"not a unigram SentencePiece model (model_type {trainer[3]})")
    return SentencePieceModel(
        pieces=pieces,
        charsmap=_bytes(normalizer.get(2, b"")),
        unk_id=trainer.get(40, 0),
        bos_id=trainer.get(41, 1),
        eos_id=trainer.get(42, 2),
        add_dummy_prefix=bool(normalizer.get(3, 1)),
        remove_extra_whitespaces=bool(normalizer.get(4, 1)),
    )


def build(model: SentencePieceModel) -> Tokenizer:
    """A ``tokenizers`` Unigram tokenizer that segments text as the SentencePiece model does."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    vocab = [
        (piece, _NEVER if kind in (_CONTROL, _UNUSED) else score)
        for piece, score, kind in model.pieces
    ]
    tok = Tokenizer(models.Unigram(vocab, unk_id=model.unk_id, byte_fallback=False))
    steps: list[normalizers.Normalizer] = []
    if model.charsmap:
        steps.append(normalizers.Precompiled(model.charsmap))
    if model.remove_extra_whitespaces:
        steps += [normalizers.Replace(Regex(" {2,}"), " "), normalizers.Strip()]
    if steps:
        tok.normalizer = normalizers.Sequence(steps)
    scheme = "always" if model.add_dummy_prefix else "never"
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme=scheme)
    return tok


def load(model_file: Path, sha256: str, cache_dir: Path | None) -> Tokenizer:
    """The tokenizer of ``model_file`` (whose sha256 the caller has checked): from the cache
    folder when it was built before, else built now and saved there (best effort: an unwritable
    cache only costs the build time next run)."""
    from tokenizers import Tokenizer

    cached = cache_dir / f"sp-{sha256[:16]}-v{BUILD_VERSION}.tokenizer.json" if cache_dir else None
    if cached is not None and cached.is_file():
        try:
            return Tokenizer.from_file(str(cached))
        except Exception:  # a damaged cache file is rebuilt below
            pass
    tok = build(parse_model(model_file.read_bytes()))
    if cached is not None:
        from memcore.workspace.core import atomic_write_text

        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(cached, tok.to_str())
        except OSError:
            pass
    return tok
