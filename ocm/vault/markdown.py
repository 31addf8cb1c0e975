"""A Markdown note as frontmatter + heading blocks, edited in place.

Nothing is ever regenerated from a model: a note is split into raw lines, the few lines an
operation owns are changed, and everything else (unknown sections, a person's extra bullets,
custom frontmatter keys, YAML comments, blank-line style, CRLF, a BOM) is written back as it
was read. `Document.parse(text).render() == text` for every text that parses.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import filterfalse
from typing import Any

from . import plainyaml
from .clock import format_timestamp
from .errors import NoteFormatError
from .fields import first_problem

# What a note cut short inside its frontmatter (a write in progress) is reported as.
UNTERMINATED_FRONTMATTER = "frontmatter starts with '---' but never ends"


def _yaml_load(text: str) -> Any:
    """PyYAML's safe load (libyaml's, ~10x faster, when present). Imported at the first
    parse, not with this module: a search that parses no note skips its ~20 ms."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _yaml_error() -> type[Exception]:
    import yaml

    return yaml.YAMLError

_KEY_RE = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(?:\s|$)")


def _unbuildable_key(lines: list[str]) -> str | None:
    """The top-level key whose value YAML scans but cannot build (a day that does not
    exist), found by loading each key's lines alone; None when no single key is to blame."""
    starts = [i for i, line in enumerate(lines) if _KEY_RE.match(line)]
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        try:
            _yaml_load("\n".join(lines[start:end]))
        except (ValueError, TypeError, OverflowError, RecursionError):
            match = _KEY_RE.match(lines[start])
            return match.group(1) if match else None
        except _yaml_error():
            continue
    return None
_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_ITEM_RE = re.compile(r"^[ \t]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_RULE_RE = re.compile(r"^[ \t]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_PLAIN_SCALAR_RE = re.compile(r"^[A-Za-z0-9_./@()+\[\]][A-Za-z0-9 _./@()+,\[\]'-]*$")
_KEY_NORMALISE_RE = re.compile(r"[^a-z0-9]+")
# The first characters of the lines that can open or close a fence or be a heading.
_MARK_STARTS = frozenset("#`~ \t")

SECTION_RULE = "---"


# Headings repeat across a vault (every session note has the same dozen): their titles and
# keys are kept made, as a build asks for each block's many times (Document.find).
HEADINGS_KEPT = 4096


@functools.lru_cache(maxsize=HEADINGS_KEPT)
def normalise_heading(title: str) -> str:
    """'🔲 Work To Be Completed' -> 'work to be completed' (emoji and punctuation dropped)."""
    return " ".join(_KEY_NORMALISE_RE.split(title.lower())).strip()


@functools.lru_cache(maxsize=HEADINGS_KEPT)
def _heading_title(heading: str) -> str:
    match = _HEADING_RE.match(heading)
    return match.group(2) if match else ""


@functools.lru_cache(maxsize=HEADINGS_KEPT)
def _heading_key(heading: str) -> str:
    return normalise_heading(_heading_title(heading))


# --------------------------------------------------------------------------- frontmatter


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    if _PLAIN_SCALAR_RE.match(text) and text == text.strip():
        try:
            if _yaml_load(text) == text:
                return text
        except _yaml_error():
            pass
    # JSON strings are valid YAML double-quoted scalars.
    return json.dumps(text, ensure_ascii=False)


def emit_key(key: str, value: Any) -> list[str]:
    """The YAML lines for one top-level key, in the block style Obsidian writes."""
    if isinstance(value, list | tuple):
        if not value:
            return [f"{key}: []"]
        return [f"{key}:"] + [f"- {_yaml_scalar(item)}" for item in value]
    return [f"{key}: {_yaml_scalar(value)}"]


@dataclass
class Frontmatter:
    lines: list[str]
    data: dict[str, Any]

    @classmethod
    def parse(cls, lines: list[str], where: object = "note") -> Frontmatter:
        # The shapes ocm writes are read without PyYAML (exactly what it would build; no
        # duplicated keys); anything else, and every broken note, goes the long way.
        data = plainyaml.load(lines)
        if data is None:
            data = cls._load(lines, where)
        wrong = first_problem(data)
        if wrong:
            raise NoteFormatError(where, wrong)
        return cls(lines=list(lines), data=data)

    @staticmethod
    def _load(lines: list[str], where: object) -> dict[str, Any]:
        seen: set[str] = set()
        for line in lines:
            match = _KEY_RE.match(line)
            if match:
                key = match.group(1)
                if key in seen:
                    raise NoteFormatError(where, f"duplicated frontmatter key {key!r}")
                seen.add(key)
        try:
            data = _yaml_load("\n".join(lines)) if lines else {}
        except _yaml_error() as exc:
            first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
            raise NoteFormatError(where, f"malformed frontmatter ({first})") from None
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            # YAML that scans but cannot be built: `created: 2024-02-30` (libyaml raises
            # the date's own ValueError), nesting deeper than Python's stack.
            key = _unbuildable_key(lines)
            named = f"{key} holds an impossible value" if key else "impossible frontmatter value"
            raise NoteFormatError(where, f"{named} ({exc})") from None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise NoteFormatError(where, "frontmatter is not a mapping of keys to values")
        return data

    def _span(self, key: str) -> tuple[int, int] | None:
        """Line range [start, end) holding `key` and its continuation lines."""
        for start, line in enumerate(self.lines):
            match = _KEY_RE.match(line)
            if match and match.group(1) == key:
                end = start + 1
                while end < len(self.lines):
                    nxt = self.lines[end]
                    continues = nxt.startswith((" ", "\t", "- ")) or nxt == "-"
                    if continues or (not nxt.strip() and self._continues_after(end)):
                        end += 1
                    else:
                        break
                return start, end
        return None

    def _continues_after(self, index: int) -> bool:
        for line in self.lines[index:]:
            if line.strip():
                return line.startswith((" ", "\t"))
        return False

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def set(self, key: str, value: Any, order: list[str] | None = None) -> None:
        """Set a key in place; a new key goes after the keys `order` puts before it (else
        at the end). None or an empty list removes the key."""
        if value is None or (isinstance(value, list | tuple) and not value):
            self.delete(key)
            return
        new_lines = emit_key(key, value)
        span = self._span(key)
        if span is None:
            at = len(self.lines)
            if order and key in order:
                before = order[: order.index(key)]
                ends = [end for k in before if (found := self._span(k)) for _, end in [found]]
                after = [start for k in order[order.index(key) + 1:]
                         if (found := self._span(k)) for start, _ in [found]]
                if ends:
                    at = max(ends)
                elif after:
                    at = min(after)
            self.lines[at:at] = new_lines
        elif self.lines[span[0] : span[1]] != new_lines:
            self.lines[span[0] : span[1]] = new_lines
        self.data[key] = list(value) if isinstance(value, tuple) else value

    def delete(self, key: str) -> None:
        span = self._span(key)
        if span is not None:
            del self.lines[span[0] : span[1]]
        self.data.pop(key, None)


# --------------------------------------------------------------------------- body blocks


@dataclass
class Block:
    """A heading and the raw lines up to the next heading (level 0 = text before any heading)."""

    level: int
    heading: str
    lines: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return _heading_title(self.heading)

    @property
    def key(self) -> str:
        return _heading_key(self.heading)

    def split_tail(self) -> tuple[list[str], list[str]]:
        """(content, tail): the tail is the trailing run of blank lines and `---` rules."""
        lines = self.lines
        end = len(lines)
        while end > 0 and (not lines[end - 1].strip() or _RULE_RE.match(lines[end - 1])):
            end -= 1
        return lines[:end], lines[end:]

    # -- text ------------------------------------------------------------------------
    def text(self) -> str:
        # (the tail is split off though strip() would take it: a one-line text stays the
        # line's own str, shared with what else holds it, as the index pickles it)
        content, _ = self.split_tail()
        return "\n".join(filterfalse(_RULE_RE.match, content)).strip()

    def set_text(self, text: str, blank_after_heading: bool = False) -> None:
        _, tail = self.split_tail()
        lead = [""] if blank_after_heading else []
        self.lines = lead + text.strip("\n").split("\n") + (tail or [""])

    # -- list items ------------------------------------------------------------------
    def item_spans(self) -> list[tuple[int, int]]:
        """[start, end) line ranges of top-level list items, continuation lines included."""
        content, _ = self.split_tail()
        spans: list[tuple[int, int]] = []
        in_fence = False
        index = 0
        while index < len(content):
            line = content[index]
            if line[:1] in _MARK_STARTS and _FENCE_RE.match(line):
                in_fence = not in_fence
            if not in_fence and _ITEM_RE.match(line) and not line.startswith(("    ", "\t")):
                end = index + 1
                # Indented non-blank lines (wrapped text, nested bullets) belong to the item.
                while (end < len(content) and content[end][:1] in (" ", "\t")
                       and content[end].strip()):
                    end += 1
                spans.append((index, end))
                index = end
                continue
            index += 1
        return spans

    def items(self) -> list[str]:
        out = []
        for start, end in self.item_spans():
            first = _ITEM_RE.match(self.lines[start])
            assert first is not None
            parts = [first.group(1)] + [line.strip() for line in self.lines[start + 1 : end]]
            out.append("\n".join(parts).strip())
        return out

    def append_items(self, items: list[str], blank_after_heading: bool = False,
                     renew: bool = False) -> list[str]:
        """Append bullets after the last existing bullet; items already present, and items
        with no letter or digit (`- --` would even render as a rule), are skipped. With
        `renew`, an item already present is moved to the end instead (a log whose last word
        counts, like Failed Commands)."""
        if renew:
            wanted = {_item_identity(item) for item in items}
            for (start, end), item in reversed(list(zip(self.item_spans(), self.items(),
                                                        strict=True))):
                if _item_identity(item) in wanted:
                    del self.lines[start:end]
        existing = {_item_identity(item) for item in self.items()}
        fresh: list[str] = []
        for item in items:
            ident = _item_identity(item)
            if any(ch.isalnum() for ch in item) and ident not in existing:
                existing.add(ident)
                fresh.append(item)
        if not fresh:
            return []
        new_lines = [line for item in fresh for line in render_item(item)]
        spans = self.item_spans()
        if spans:
            at = spans[-1][1]
            self.lines[at:at] = new_lines
        else:
            content, tail = self.split_tail()
            lead = [""] if blank_after_heading and not content else []
            self.lines = content + lead + new_lines + (tail or [""])
        return fresh

    def replace_items(self, items: list[str], blank_after_heading: bool = False) -> None:
        """Swap the bullets for `items`, keeping any non-bullet text a person wrote."""
        spans = self.item_spans()
        new_lines = [line for item in items for line in render_item(item)]
        if spans:
            first = spans[0][0]
            for start, end in reversed(spans):
                del self.lines[start:end]
            self.lines[first:first] = new_lines
        elif new_lines:
            content, tail = self.split_tail()
            lead = [""] if blank_after_heading and not content else []
            self.lines = content + lead + new_lines + (tail or [""])

    # -- tables ----------------------------------------------------------------------
    def table_rows(self) -> list[list[str]]:
        content, _ = self.split_tail()
        rows = [line for line in content if line.lstrip().startswith("|")]
        body = [row for row in rows[1:] if not re.match(r"^\s*\|[\s:|-]+\|?\s*$", row)]
        return [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in body]

    def append_table_rows(self, header: list[str], rows: list[list[str]]) -> list[list[str]]:
        existing = {tuple(row) for row in self.table_rows()}
        fresh = [row for row in rows if tuple(row) not in existing]
        if not fresh:
            return []
        rendered = ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
                    for row in fresh]
        content, tail = self.split_tail()
        table_at = [i for i, line in enumerate(content) if line.lstrip().startswith("|")]
        if table_at:
            at = table_at[-1] + 1
            self.lines[at:at] = rendered
        else:
            head = ["| " + " | ".join(header) + " |",
                    "|" + "|".join("-" * (len(h) + 2) for h in header) + "|"]
            self.lines = content + ([""] if not content else []) + head + rendered + (
                tail or [""])
        return fresh


def _item_identity(item: str) -> str:
    # Backticks are ignored ("`x`" == "x"), unless the item is nothing but backticks.
    return " ".join(item.replace("`", "").split()).lower() or " ".join(item.split())


def render_item(item: str) -> list[str]:
    lines = item.strip().split("\n")
    return [f"- {lines[0].strip()}"] + [f"  {line.strip()}" for line in lines[1:] if line.strip()]


def is_rule(line: str) -> bool:
    return bool(_RULE_RE.match(line))


# --------------------------------------------------------------------------- document


@dataclass
class Document:
    frontmatter: Frontmatter
    blocks: list[Block]
    has_frontmatter: bool = True
    newline: str = "\n"
    bom: bool = False

    @classmethod
    def parse(cls, text: str, where: object = "note") -> Document:
        bom = text.startswith("\ufeff")
        if bom:
            text = text[1:]
        newline = "\r\n" if "\r\n" in text else "\n"
        if newline == "\r\n":
            text = text.replace("\r\n", "\n")
        lines = text.split("\n")
        has_fm = bool(lines) and lines[0].rstrip() == "---"
        body_start = 0
        fm_lines: list[str] = []
        if has_fm:
            for index in range(1, len(lines)):
                if lines[index].rstrip() in ("---", "..."):
                    fm_lines = lines[1:index]
                    body_start = index + 1
                    break
            else:
                raise NoteFormatError(where, UNTERMINATED_FRONTMATTER)
        frontmatter = Frontmatter.parse(fm_lines, where)
        return cls(frontmatter, _split_blocks(lines[body_start:]), has_fm, newline, bom)

    @classmethod
    def new(cls) -> Document:
        return cls(Frontmatter([], {}), [Block(0, "", [""])])

    def render(self) -> str:
        out: list[str] = []
        if self.has_frontmatter or self.frontmatter.lines:
            out += ["---", *self.frontmatter.lines, "---"]
        for block in self.blocks:
            if block.level:
                out.append(block.heading)
            out.extend(block.lines)
        text = "\n".join(out)
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        return ("\ufeff" if self.bom else "") + text

    # -- navigation ------------------------------------------------------------------
    def find(self, key: str, parent: str | None = None) -> Block | None:
        """The first level-2 block with this key, or the level-3 child of `parent`."""
        if parent is None:
            return next((b for b in self.blocks if b.level == 2 and b.key == key), None)
        start = self._index_of(parent)
        if start is None:
            return None
        for block in self.blocks[start + 1 : self._section_end(start)]:
            if block.level == 3 and block.key == key:
                return block
        return None

    def _index_of(self, key: str) -> int | None:
        return next((i for i, b in enumerate(self.blocks) if b.level == 2 and b.key == key), None)

    def _section_end(self, index: int) -> int:
        level = self.blocks[index].level
        end = index + 1
        while end < len(self.blocks) and not (0 < self.blocks[end].level <= level):
            end += 1
        return end

    def section_text(self, key: str) -> str:
        """A level-2 section's text including its subsections' headings and text."""
        start = self._index_of(key)
        if start is None:
            return ""
        parts = [self.blocks[start].text()]
        for block in self.blocks[start + 1 : self._section_end(start)]:
            parts += [block.title, block.text()]
        return "\n".join(part for part in parts if part).strip()

    def ensure(self, key: str, title: str, order: list[str], parent: str | None = None,
               parent_title: str = "", parent_order: list[str] | None = None) -> Block:
        """Find a section, or create it where `order` (canonical keys) says it belongs; a
        missing parent is created where `parent_order` says."""
        found = self.find(key, parent)
        if found is not None:
            return found
        if parent is None:
            level, at = 2, self._insert_point(key, order)
        else:
            parent_block = self.ensure(parent, parent_title, parent_order or [])
            parent_index = self.blocks.index(parent_block)
            level = 3
            at = self._child_insert_point(parent_index, key, order)
        block = Block(level, f"{'#' * level} {title}", [])
        self._insert(at, block)
        return block

    def _insert_point(self, key: str, order: list[str]) -> int:
        rank = order.index(key) if key in order else len(order)
        at = len(self.blocks)
        for index, block in enumerate(self.blocks):
            if block.level == 2 and block.key in order and order.index(block.key) > rank:
                at = index
                break
        return at

    def _child_insert_point(self, parent_index: int, key: str, order: list[str]) -> int:
        rank = order.index(key) if key in order else len(order)
        end = self._section_end(parent_index)
        for index in range(parent_index + 1, end):
            block = self.blocks[index]
            if block.level == 3 and block.key in order and order.index(block.key) > rank:
                return index
        return end

    def _insert(self, at: int, block: Block) -> None:
        """Insert an empty new block, moving the previous block's separator tail onto it."""
        prev = self.blocks[at - 1]
        content, tail = prev.split_tail()
        if block.level == 2 and prev.level > 0:
            prev.lines = content + ["", SECTION_RULE, ""]
        else:
            prev.lines = content + [""]
        if not tail:
            tail = [""]
        if block.level == 2 and at < len(self.blocks) and not any(is_rule(x) for x in tail):
            tail = ["", SECTION_RULE, ""]
        block.lines = tail
        self.blocks.insert(at, block)

    def remove(self, block: Block) -> None:
        """Drop a block, handing its trailing separator to the block before it."""
        index = self.blocks.index(block)
        if index == 0:
            return
        _, tail = block.split_tail()
        prev = self.blocks[index - 1]
        content, _ = prev.split_tail()
        prev.lines = content + (tail or [""])
        del self.blocks[index]


def _split_blocks(lines: list[str]) -> list[Block]:
    blocks = [Block(0, "")]
    start = 0  # the first line of the last block's text
    in_fence = False
    fence_marker = ""
    for index in [i for i, line in enumerate(lines) if line[:1] in _MARK_STARTS]:
        line = lines[index]
        if line[0] != "#":
            fence = _FENCE_RE.match(line)
            if fence:
                marker = fence.group(1)[0]
                if not in_fence:
                    in_fence, fence_marker = True, marker
                elif marker == fence_marker:
                    in_fence = False
            continue
        heading = None if in_fence else _HEADING_RE.match(line)
        if heading and heading.group(2):
            blocks[-1].lines = lines[start:index]
            blocks.append(Block(len(heading.group(1)), line))
            start = index + 1
    blocks[-1].lines = lines[start:]
    return blocks
