"""Identifiers and slugs: generated safe, validated so nothing can escape the vault."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from .errors import InvalidInput

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,159}$")
_SLUG_WORD_RE = re.compile(r"[a-z0-9]+")
MAX_SLUG_WORDS = 4


def validate_id(value: object, what: str = "id") -> str:
    """An id is a file-name stem: ASCII letters, digits, `_ . -`; no path separators, no `..`."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string")
    text = value.strip()
    if "\x00" in text:
        raise InvalidInput(f"invalid {what} {text!r}: contains a NUL byte")
    if not _ID_RE.match(text) or ".." in text:
        raise InvalidInput(
            f"invalid {what} {text!r}: use letters, digits, '_', '.', '-' only "
            "(no path separators or '..')"
        )
    return text


# A word no one types: 32 or more hex digits, or 20 or more characters mixing letters and
# digits (a key, a hash). A slug names a file and an id, which redaction never touches.
_MACHINE_WORD_RE = re.compile(r"[0-9a-f]{32,}|(?=[a-z]*[0-9])(?=[0-9]*[a-z])[a-z0-9]{20,}")


def slugify(text: str, max_words: int = MAX_SLUG_WORDS) -> str:
    """Lowercase ASCII words joined by '-', at most `max_words` of them ('' if none); words
    that look machine-made (a key, a hash) are left out."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = [w for w in _SLUG_WORD_RE.findall(ascii_text.lower())
             if not _MACHINE_WORD_RE.fullmatch(w)]
    return "-".join(words[:max_words])


def validate_slug(value: str) -> str:
    """A slug given by an agent or person: reduced to safe words, refused if nothing is left."""
    if "\x00" in value or "/" in value or "\\" in value or ".." in value:
        raise InvalidInput(f"invalid slug {value!r}: no path separators or '..'")
    slug = slugify(value)
    if not slug:
        raise InvalidInput("invalid slug: needs a word of letters or digits (words that look "
                           "like a key or a hash are left out)")
    return slug


def random_suffix(length: int = 6) -> str:
    import secrets  # ~8 ms (hmac, hashlib, random): only writes make new ids

    return secrets.token_hex(length // 2 + 1)[:length]


def new_memory_id(folder: Path, memory_type: str, title: str) -> str:
    """A new record's id: its title's first words and a random suffix, free in `folder`
    (its type's folder)."""
    stem = slugify(title, max_words=6) or memory_type.replace("_", "-")
    while True:
        candidate = f"{stem}-{random_suffix()}"
        if not (folder / f"{candidate}.md").exists():
            return candidate


def new_session_id(folder: Path, base: str) -> str:
    """`base`, else `base-2`, `base-3`...: the first id no session in `folder` holds."""
    session_id, n = base, 1
    # A slug renames `<id>.md` to `<id>_<slug>.md`; its id stays taken.
    while (folder / f"{session_id}.md").exists() or any(folder.glob(f"{session_id}_*.md")):
        n += 1
        session_id = f"{base}-{n}"
    return session_id
