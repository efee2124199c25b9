"""Attachments of transcript messages: image and file content blocks kept as references.

A reference says what the block was and where it came from (``name``, media ``type``,
``size`` in bytes, ``location``: a URL, a path, ``file id …``, or ``inline`` for data embedded
in the transcript line), never what it holds: embedded data is measured and dropped, and text
that comes with such a block (an inline text document, a caption, OCR) is not kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Attachment:
    """An image or file block: a reference to it, never its content (nor text inferred from
    it). ``location`` is where it was: a URL, a path, a file id, or ``inline`` for data
    embedded in the transcript line (``line``)."""

    kind: str  # image | file
    name: str | None
    type: str | None  # media type (image/png, application/pdf …)
    size: int | None  # bytes, when known (inline data: its decoded size)
    location: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "type": self.type,
            "size": self.size,
            "location": self.location,
        }

    def label(self) -> str:
        """One line for the text the model and ``recall`` read: ``[image: a.png, image/png,
        48,213 bytes]``."""
        parts = [self.name or "unnamed", self.type or "unknown type"]
        if self.size is not None:
            parts.append(f"{self.size:,} bytes")
        return f"[{self.kind}: {', '.join(parts)}]"


_IMAGE_BLOCKS = ("image", "image_url", "input_image")
_FILE_BLOCKS = ("document", "file", "input_file")


def attachments_of(content: Any) -> tuple[Attachment, ...]:
    """The references of the image and file blocks of a content list."""
    if not isinstance(content, list):
        return ()
    found = (attachment_of(b) for b in content if isinstance(b, dict))
    return tuple(a for a in found if a is not None)


def _str(*values: Any) -> str | None:
    for v in values:
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


def attachment_of(block: dict[str, Any]) -> Attachment | None:
    """The reference of an image or file content block (Claude Code ``image`` / ``document``,
    OpenAI ``image_url`` / ``input_image`` / ``file`` / ``input_file``), or None for other
    blocks. Embedded data is measured, never kept; nor is any text that comes with it."""
    kind = block.get("type")
    if kind not in _IMAGE_BLOCKS + _FILE_BLOCKS:
        return None
    src: dict[str, Any] = block["source"] if isinstance(block.get("source"), dict) else {}
    inner: dict[str, Any] = block["file"] if isinstance(block.get("file"), dict) else {}
    img = block.get("image_url")
    url = _str(img.get("url") if isinstance(img, dict) else img, src.get("url"), block.get("url"))
    url = url or _str(inner.get("file_url"), block.get("file_url"))
    media = _str(src.get("media_type"), block.get("media_type"), block.get("mime_type"))
    media = media or _str(inner.get("mime_type"))
    size = next(
        (v for v in (block.get("size"), src.get("size"), inner.get("size")) if type(v) is int),
        None,
    )
    location: str | None = None
    data = src.get("data") if src.get("type") in ("base64", "text") else None
    data = data if isinstance(data, str) else _str(inner.get("file_data"), block.get("file_data"))
    if url and url.startswith("data:"):
        header, _, payload = url.partition(",")
        media = media or header[5:].split(";")[0] or None
        data, url = payload, None
    if data is not None:
        location = "inline"
        if size is None:
            size = len(data.encode()) if src.get("type") == "text" else _b64_size(data)
        if media is None and data.startswith("data:"):
            media = data[5:].split(";")[0] or None
    path = _str(block.get("path"), src.get("path"), inner.get("path"))
    file_id = _str(src.get("file_id"), inner.get("file_id"), block.get("file_id"))
    location = url or path or (f"file id {file_id}" if file_id else None) or location
    name = _str(
        block.get("name"),
        block.get("title"),
        block.get("filename"),
        inner.get("filename"),
        src.get("filename"),
    )
    if name is None and (url or path):
        tail = (url or path or "").split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        name = tail or None
    return Attachment(
        "image" if kind in _IMAGE_BLOCKS else "file",
        name,
        media,
        size,
        location or "unknown",
    )


def _b64_size(data: str) -> int:
    body = data.split(",", 1)[1] if data.startswith("data:") else data
    body = "".join(body.split())
    return max(0, len(body) * 3 // 4 - body[-2:].count("="))
