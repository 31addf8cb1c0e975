"""Reading a note that another program may be rewriting in place.

Editors that save in place truncate the file and then write it again, so for a moment a
note is empty or ends inside its frontmatter. A write that read it then would either act on
a note with no id ("session id must be a non-empty string") or write back a note that lost
everything the editor had not written yet. Writers read through `settled_text`: an empty or
cut-short note is read again until it is whole, and if it stays that way the write is
refused with an error that says why, before anything is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..errors import Conflict, NoteFormatError
from ..markdown import UNTERMINATED_FRONTMATTER, Document

# How long a writer waits for another program to finish a note before giving up.
SETTLE_SECONDS = 2.0
_POLL_SECONDS = 0.05


def _unfinished(text: str, path: Path) -> str | None:
    """Why `text` looks like a note caught mid-write, or None when it is whole."""
    if not text.strip():
        return "it is empty"
    try:
        Document.parse(text, path)
    except NoteFormatError as exc:
        # Anything else (malformed YAML in a closed frontmatter) is a broken note, reported
        # at once by the caller's own parse.
        if exc.problem == UNTERMINATED_FRONTMATTER:
            return "it ends inside its frontmatter"
    return None


def settled_text(path: Path, read: Callable[[Path], str]) -> str:
    """`read(path)`, once the note is neither empty nor cut short inside its frontmatter;
    `Conflict` when it stays that way for `SETTLE_SECONDS`."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        text = read(path)
        problem = _unfinished(text, path)
        if problem is None:
            return text
        if time.monotonic() >= deadline:
            raise Conflict(
                f"{path.name}: note is being written by another program, or was left "
                f"unfinished ({problem}); nothing was written, try again once it is saved")
        time.sleep(_POLL_SECONDS)


def settled_document(path: Path, read: Callable[[Path], str]) -> Document:
    """`settled_text`, parsed: what a writer reads a note's id or state from."""
    return Document.parse(settled_text(path, read), path)
