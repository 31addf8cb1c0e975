"""A note's `##`/`###` sections, parsed back from its headings: the chunks search ranks
and links to, and what `ocm show ID#Heading` prints.

Line numbers count from 1 in the file as it is on disk (frontmatter included), so an
editor can jump to them. Links follow Obsidian's heading-link syntax: `file.md#Heading`,
and `file.md#Parent#Child` for a `###` heading whose title is not unique in the note.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .errors import NotFound
from .markdown import HEADINGS_KEPT, Block, Document, is_rule, normalise_heading

# The levels that start a section; deeper headings stay inside the text of theirs.
SECTION_LEVELS = (2, 3)
# What Obsidian replaces with a space when it writes a link to a heading (its
# `stripHeadingForLink`): these would end the link or start a block/alias reference.
_LINK_UNSAFE = re.compile(r"[:#|^\\\r\n]|%%|\[\[|\]\]")


@dataclass
class Section:
    """One `##`/`###` section (title "" for the text before the first of them)."""

    title: str
    level: int
    line: int  # the heading's line; for the untitled lead, its first line of text
    text: str  # the section's own text, without its subsections
    parent: str = ""  # the enclosing `##` title of a `###` section
    link: str = ""  # the heading part of the Obsidian link ("" for the lead)


@functools.lru_cache(maxsize=HEADINGS_KEPT)
def link_heading(title: str) -> str:
    """A heading as Obsidian writes it in a link: `Q: why #2?` -> `Q why 2?`."""
    return " ".join(_LINK_UNSAFE.sub(" ", title).split())


def body_offset(doc: Document) -> int:
    """How many lines of the file come before the body (the frontmatter and its fences)."""
    return len(doc.frontmatter.lines) + 2 if doc.has_frontmatter else 0


def sections(doc: Document) -> list[Section]:
    """Every `##`/`###` section, in file order, preceded by the untitled lead (the text
    before the first of them) when it has any."""
    out: list[Section] = []
    line = body_offset(doc) + 1
    current: Section | None = None
    parent = ""
    lines: list[str] = []

    def close() -> None:
        if current is not None:
            current.text = _text(lines)
            out.append(current)

    for block in doc.blocks:
        if block.level in SECTION_LEVELS:
            close()
            parent = block.title if block.level == 2 else parent
            current = Section(block.title, block.level, line, "",
                              parent if block.level == 3 else "")
            lines = list(block.lines)
        else:
            if current is None:
                current = Section("", 0, line, "")
                lines = []
            if block.level:
                lines.append(block.heading)
            lines += block.lines
        line += len(block.lines) + (1 if block.level else 0)
    close()
    if out and out[0].level == 0:
        lead = out[0]
        if not lead.text:
            out.pop(0)
        else:  # point at the lead's first line of text, not at a blank line before it
            first = next(i for i, raw in enumerate(_lead_lines(doc)) if raw.strip())
            lead.line += first
    _set_links(out)
    return out


def _lead_lines(doc: Document) -> list[str]:
    out: list[str] = []
    for block in doc.blocks:
        if block.level in SECTION_LEVELS:
            break
        if block.level:
            out.append(block.heading)
        out += block.lines
    return out


def _text(lines: list[str]) -> str:
    return Block(0, "", lines).text()


def _set_links(found: list[Section]) -> None:
    counts: dict[str, int] = {}
    for section in found:
        if section.level:
            key = link_heading(section.title)
            counts[key] = counts.get(key, 0) + 1
    for section in found:
        if not section.level:
            continue
        link = link_heading(section.title)
        if section.level == 3 and counts[link] > 1 and section.parent:
            link = f"{link_heading(section.parent)}#{link}"
        section.link = link


def find_section(doc: Document, name: str, where: str = "this note") -> tuple[Section, str]:
    """The section `name` names, and its Markdown as written (heading, text and
    subsections, up to the next heading of its level or above). `name` may be the title as
    written, as Obsidian links it, in any case and punctuation, or `Parent#Child`."""
    found = sections(doc)
    wanted = name.strip().lstrip("#").strip()
    parent = ""
    if "#" in wanted:
        parent, _, wanted = wanted.rpartition("#")
        parent = parent.split("#")[-1]
    candidates = [s for s in found if s.level and (
        not parent or normalise_heading(s.parent) == normalise_heading(parent))]
    for same in (lambda s: s.title == wanted,
                 lambda s: link_heading(s.title) == link_heading(wanted),
                 lambda s: normalise_heading(s.title) == normalise_heading(wanted)):
        match = next((s for s in candidates if same(s)), None)
        if match is not None:
            return match, _markdown(doc, match)
    if not link_heading(wanted):
        raise NotFound(f"no section name given for {where}")
    raise NotFound(f"{where} has no section {name.strip()!r}")


def _markdown(doc: Document, section: Section) -> str:
    """The section's raw lines: from its heading to the next heading of its level or above
    (headings inside fenced code are text, as the blocks already know)."""
    line = body_offset(doc) + 1
    out: list[str] = []
    for block in doc.blocks:
        if out and 0 < block.level <= section.level:
            break
        if out or line == section.line:
            out += [block.heading, *block.lines]
        line += len(block.lines) + (1 if block.level else 0)
    while out and (not out[-1].strip() or is_rule(out[-1])):
        out.pop()
    return "\n".join(out) + "\n"
