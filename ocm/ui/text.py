"""A note's Markdown as HTML: markdown-it-py with raw HTML off (a `<script>` in a note is
shown as text), wiki links (`[[id]]`, `[[folder/id|label]]`) turned into dashboard links."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt
from markupsafe import Markup

_WIKI = re.compile(r"\[\[([^\[\]|\n]{1,300})(?:\|([^\[\]\n]{1,300}))?\]\]")
_FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # "commonmark" with html off: raw HTML blocks and inline tags are escaped as text;
    # markdown-it also refuses javascript:/vbscript:/data: link targets.
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"])


def note_link(note_id: str) -> str:
    """The dashboard address of a note by id (or wiki-link target `folder/id`)."""
    stem = note_id.strip().rsplit("/", 1)[-1].removesuffix(".md")
    return "/note/" + quote(stem, safe="")


def _wiki(match: re.Match[str]) -> str:
    target, label = match.group(1), match.group(2)
    shown = (label or target.rsplit("/", 1)[-1]).replace("[", "\\[").replace("]", "\\]")
    return f"[{shown}](<{note_link(target)}>)"


def body_of(markdown: str) -> str:
    """The note's text without its YAML frontmatter."""
    return _FRONTMATTER.sub("", markdown, count=1)


def to_html(markdown: str) -> Markup:
    """Safe HTML for a note body (the only HTML markdown-it emits is its own)."""
    return Markup(_parser().render(_WIKI.sub(_wiki, markdown)))


def plain(value: Any) -> str:
    """A frontmatter value as one line of text."""
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {plain(v)}" for k, v in value.items())
    return "" if value is None else str(value)
