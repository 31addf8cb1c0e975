"""A note as the index may see it: parsed, with every secret the redactor finds replaced.

Notes written by `ocm` are redacted on the way in, but a person can type a key into a note
in an editor. The index is derived data that outlives edits (Whoosh keeps a deleted or
replaced note's terms in its segment until that segment is rewritten, and large segments are
rewritten only by a rebuild), so nothing that looks like a secret is ever indexed: removing
it from the note then leaves no trace in `.index/`. Most notes hold nothing of the sort and
cost one `find_secrets` scan; only the rare ones with a hit are rewritten in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..folder import read_note_text
from ..markdown import Document
from .redact import find_secrets, redact


def _redacted_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _redacted_value(v) for k, v in value.items()}
    return value


def read_scrubbed(path: Path) -> Document:
    """`read_document(path)` with secrets redacted in the body and in frontmatter values;
    the file itself is never changed (a note is the person's text)."""
    text = read_note_text(path)
    doc = Document.parse(text, path)
    if not find_secrets(text):
        return doc
    doc.frontmatter.data = _redacted_value(doc.frontmatter.data)
    for block in doc.blocks:
        block.heading = redact(block.heading)
        joined = "\n".join(block.lines)
        cleaned = redact(joined)
        if cleaned != joined:
            block.lines = cleaned.split("\n")
    return doc
