"""Plans for `ocm import`: other tools' memories as typed ocm records (no writes here).

Formats:
* `mcp-memory` — the official MCP memory server's JSONL knowledge graph: lines of
  `{"type":"entity","name","entityType","observations":[...]}` and
  `{"type":"relation","from","to","relationType"}`; one record per entity (its
  observations as bullets, its outgoing relations as lines), type from `entityType`.
* `basic-memory` — Markdown notes with frontmatter (`title`, `type`, `permalink`, `tags`)
  and `## Observations` bullets `- [category] text #tag (context)`: one record per
  observation, type from its category; a note without observations is one record.
* `claude` — Claude Code memory: a `CLAUDE.md` (bullets and paragraphs under headings, one
  record each, type from the heading's words) or an auto-memory folder
  (`~/.claude/projects/<project>/memory/`: `MEMORY.md` plus sibling topic files; a topic
  file with `name`/`description`/`type` frontmatter is one record).
* `ocm` — an `ocm export --format json` backup, restored file by file.

Everything is parsed and validated before anything is written (a bad line refuses the
whole import, naming the line), so a refused import changes nothing.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import BaseHandler, JSONHandler, YAMLHandler

from ocm.vault.boundary import MAX_NOTE_BYTES
from ocm.vault.errors import InvalidInput, OcmError
from ocm.vault.folder import read_note_text
from ocm.vault.ids import slugify
from ocm.vault.markdown import Document
from ocm.vault.memories import MAX_CONTENT_CHARS, canonical_type

FORMATS = ("auto", "mcp-memory", "basic-memory", "claude", "ocm")
MAX_IMPORT_FILES = 5000

# Words other tools use for a kind of fact, beyond ocm's own aliases.
CATEGORY_TYPES = {
    "fact": "discovery", "tech": "discovery", "technology": "discovery", "design": "decision",
    "architecture": "decision", "idea": "context", "requirement": "principle",
    "problem": "gotcha", "issue": "gotcha", "risk": "gotcha", "solution": "bug_fix",
    "resolution": "bug_fix", "todo": "context", "task": "context", "question": "context",
    "note": "context", "status": "context", "goal": "context", "project": "context",
    "person": "context", "organization": "context", "tool": "reference", "library": "reference",
    "url": "reference", "doc": "reference", "docs": "reference", "feedback": "principle",
    "user": "preference", "style": "preference", "command": "procedure", "workflow": "procedure",
}
# Claude Code auto-memory topic file `type:` values.
CLAUDE_TOPIC_TYPES = {"user": "preference", "feedback": "principle", "project": "context",
                      "reference": "reference"}
# Words in a CLAUDE.md heading -> the type of the facts under it (first match wins).
HEADING_TYPES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"gotcha|pitfall|warning|caveat|careful|avoid|never|don'?t|known issue"),
     "gotcha"),
    (re.compile(r"decision|chose|why"), "decision"),
    (re.compile(r"command|build|test|run|setup|install|workflow|deploy|release|how to|steps"),
     "procedure"),
    (re.compile(r"preference|personal|my "), "preference"),
    (re.compile(r"lesson|learn"), "lesson"),
    (re.compile(r"reference|link|docs|resources"), "reference"),
    (re.compile(r"architecture|structure|overview|layout|context|about|stack|project"),
     "context"),
    (re.compile(r"style|convention|rule|standard|guideline|principle|code|practice"),
     "principle"),
]
_OBSERVATION_RE = re.compile(r"^\[([^\]]+)\]\s*(.+)$", re.S)
_HASHTAG_RE = re.compile(r"(?:^|\s)#([\w/-]*[A-Za-z_][\w/-]*)")
_MD_LINK_LINE_RE = re.compile(r"^\s*[-*+]\s*\[[^\]]*\]\(([^)]+\.md)\)")


@dataclass
class Planned:
    """One record `ocm import` would write."""

    content: str
    type: str
    source: str
    title: str | None = None
    tags: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "title": self.title or self.content.split("\n")[0][:80],
                "tags": self.tags, "source": self.source, "chars": len(self.content)}


def type_for(word: str | None, default: str) -> str:
    """A foreign category/entity type -> an ocm type ('warning' -> gotcha), else default."""
    key = (word or "").strip().lower().replace("-", "_").replace(" ", "_")
    if not key:
        return default
    if key in CATEGORY_TYPES:
        return CATEGORY_TYPES[key]
    try:
        return canonical_type(key)
    except InvalidInput:
        return default


def _tag(word: str) -> str:
    tag = slugify(word, max_words=4)
    if tag and tag.isdigit():
        tag = "n" + tag  # Obsidian tags need a non-digit
    return tag


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_CONTENT_CHARS else text[: MAX_CONTENT_CHARS - 1] + "…"


def _files(source: Path, pattern: str = "*.md") -> list[Path]:
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise InvalidInput(f"nothing to import at {source}: no such file or folder")
    # Links are never followed out of the folder (rglob does not enter linked folders).
    found = sorted(p for p in source.rglob(pattern)
                   if not any(part.startswith(".") for part in p.relative_to(source).parts)
                   and not p.is_symlink())
    if len(found) > MAX_IMPORT_FILES:
        raise InvalidInput(f"{source} holds {len(found):,} files (max {MAX_IMPORT_FILES:,})")
    return found


def _read(path: Path) -> str:
    try:
        return read_note_text(path)
    except OcmError as exc:
        raise InvalidInput(f"cannot import {path}: {exc}") from None


class _TOMLHandler(BaseHandler):
    """`+++` TOML frontmatter (Hugo, Zola, some Obsidian exports), read with the standard
    library's tomllib: python-frontmatter's own TOML handler needs the `toml` package."""

    FM_BOUNDARY = re.compile(r"^\+{3,}\s*$", re.MULTILINE)
    START_DELIMITER = END_DELIMITER = "+++"

    def load(self, fm: str, **kwargs: object) -> dict[str, Any]:
        return tomllib.loads(fm)


# Other tools' notes carry YAML (`---`), JSON (`{ … }`) or TOML (`+++`) frontmatter.
# python-frontmatter reads all three; ocm's own notes go through `ocm.vault.markdown`,
# whose round-trip parser keeps comments, key order and line endings when it rewrites.
_FOREIGN_HANDLERS: tuple[BaseHandler, ...] = (YAMLHandler(), JSONHandler(), _TOMLHandler())


def _foreign_note(path: Path) -> tuple[dict[str, Any], Document]:
    """Another tool's note: its frontmatter (any of the three formats) and its body."""
    text = _read(path)
    handler = next((h for h in _FOREIGN_HANDLERS if h.detect(text)), None)
    try:
        post = frontmatter.loads(text, handler=handler)
    except (ValueError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidInput(f"cannot import {path}: bad frontmatter: {first}") from None
    metadata = post.metadata if isinstance(post.metadata, dict) else {}
    try:
        return dict(metadata), Document.parse(post.content, path)
    except OcmError as exc:
        raise InvalidInput(f"cannot import {path}: {exc}") from None


def _basic_memory_note(head: str) -> bool:
    return head.startswith("---") and ("permalink:" in head or "## Observations" in head)


def _mcp_memory_line(head: str) -> bool:
    first = next((line for line in head.splitlines() if line.strip()), "")
    try:
        item = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(item, dict) and item.get("type") in ("entity", "relation")


def detect(source: Path) -> str:
    """The format of `source`, from what it holds; an error for anything not recognised
    (a README, a pyproject.toml), so `--format auto` never turns any file into memories."""
    if source.is_dir():
        if (source / "MEMORY.md").is_file() or (source / "CLAUDE.md").is_file():
            return "claude"
        if any(_basic_memory_note(_read(p)[:4000]) for p in _files(source)[:50]):
            return "basic-memory"
    else:
        name = source.name.lower()
        if name in ("claude.md", "memory.md", "claude.local.md"):
            return "claude"
        head = _read(source)[:4000]
        if name.endswith(".json") and '"ocm-export"' in head:
            return "ocm"
        if name.endswith((".jsonl", ".ndjson")) or (
                name.endswith(".json") and _mcp_memory_line(head)):
            return "mcp-memory"
        if _basic_memory_note(head):
            return "basic-memory"
    raise InvalidInput(
        f"cannot tell what {source} holds: not an MCP memory JSONL, basic-memory notes, "
        "a CLAUDE.md / MEMORY.md (or its folder) or an `ocm export` file; "
        "name the format with --format if it is one of them")


# --------------------------------------------------------------------------- MCP memory


def plan_mcp_memory(source: Path) -> list[Planned]:
    entities: dict[str, dict[str, Any]] = {}
    relations: list[tuple[str, str, str]] = []
    for path in _files(source, "*.jsonl"):
        for number, line in enumerate(_read(path).splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}:{number}: not JSON ({exc.msg})") from None
            except RecursionError:
                raise InvalidInput(f"{path}:{number}: JSON nested too deeply") from None
            if not isinstance(item, dict):
                raise InvalidInput(f"{path}:{number}: expected a JSON object")
            kind = item.get("type")
            if kind == "entity":
                name = item.get("name")
                observations = item.get("observations") or []
                if not isinstance(name, str) or not name.strip() or not isinstance(
                        observations, list):
                    raise InvalidInput(f"{path}:{number}: an entity needs a name and a list "
                                       "of observations")
                entry = entities.setdefault(name.strip(), {
                    "type": str(item.get("entityType") or ""), "observations": []})
                entry["observations"] += [str(o).strip() for o in observations if str(o).strip()]
            elif kind == "relation":
                ends = [item.get(k) for k in ("from", "to", "relationType")]
                ends = [e for e in ends if isinstance(e, str) and e.strip()]
                if len(ends) != 3:
                    raise InvalidInput(f"{path}:{number}: a relation needs from, to and "
                                       "relationType")
                relations.append((str(ends[0]).strip(), str(ends[1]).strip(),
                                  str(ends[2]).strip()))
            else:
                raise InvalidInput(f"{path}:{number}: unknown line type {kind!r} "
                                   "(expected entity or relation)")
    for start, _, _ in relations:
        entities.setdefault(start, {"type": "", "observations": []})
    out: list[Planned] = []
    for name, entry in entities.items():
        lines = [f"- {o}" for o in entry["observations"]]
        lines += [f"- {rel.replace('_', ' ')} {end}" for start, end, rel in relations
                  if start == name]
        kind = entry["type"]
        head = f"{name} ({kind})" if kind else name
        content = head + ("\n\n" + "\n".join(lines) if lines else "")
        tags = [t for t in (_tag(kind),) if t]
        out.append(Planned(_clip(content), type_for(kind, "context"), f"{source.name}: {name}",
                           title=head[:200], tags=tags))
    return out


# --------------------------------------------------------------------------- basic-memory


def _strip_hashtags(text: str) -> tuple[str, list[str]]:
    tags = [_tag(t) for t in _HASHTAG_RE.findall(text)]
    clean = _HASHTAG_RE.sub(" ", text)
    return " ".join(clean.split()), [t for t in tags if t]


def plan_basic_memory(source: Path) -> list[Planned]:
    out: list[Planned] = []
    for path in _files(source):
        fm, doc = _foreign_note(path)
        heading = next((b.title for b in doc.blocks if b.level == 1), "")
        title = str(fm.get("title") or heading or path.stem).strip()
        note_tags = fm.get("tags") or []
        note_tags = [note_tags] if isinstance(note_tags, str) else note_tags
        base_tags = [t for t in (_tag(str(x)) for x in note_tags) if t]
        observations = doc.find("observations")
        items = observations.items() if observations else []
        if items:
            for item in items:
                match = _OBSERVATION_RE.match(item.strip())
                category, text = (match.group(1), match.group(2)) if match else ("", item)
                text, tags = _strip_hashtags(text)
                if not text:
                    continue
                out.append(Planned(_clip(f"{text}\n\n(From the note “{title}”.)"),
                                   type_for(category, "discovery"), f"{path.name}: [{category}]",
                                   tags=list(dict.fromkeys(base_tags + tags))))
            continue
        body = "\n".join(
            line for b in doc.blocks if b.level != 1 and b.key != "relations"
            for line in ([b.heading] if b.level > 1 else []) + b.lines).strip()
        if body:
            out.append(Planned(_clip(body), type_for(str(fm.get("type") or ""), "context"),
                               path.name, title=title[:200], tags=base_tags))
    return out


# --------------------------------------------------------------------------- Claude Code


def _heading_type(heading: str, default: str) -> str:
    text = heading.lower()
    for pattern, memory_type in HEADING_TYPES:
        if pattern.search(text):
            return memory_type
    return default


def _paragraphs(lines: list[str]) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    fence = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not line.strip() and not fence:
            if current:
                out.append("\n".join(current).strip())
                current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current).strip())
    return [p for p in out if p and not re.fullmatch(r"[-*_ ]{3,}", p)]


def _plan_claude_markdown(path: Path, default: str, skip_links: bool) -> list[Planned]:
    try:
        doc = Document.parse(_read(path), path)
    except OcmError as exc:
        raise InvalidInput(f"cannot import {path}: {exc}") from None
    out: list[Planned] = []
    for block in doc.blocks:
        section = block.title if block.level else path.stem
        memory_type = _heading_type(section, default)
        tags = [t for t in (_tag(section),) if t and section != path.stem]
        spans = block.item_spans()
        taken: set[int] = set()
        for item, (start, end) in zip(block.items(), spans, strict=True):
            taken.update(range(start, end))
            line = block.lines[start]
            if skip_links and _MD_LINK_LINE_RE.match(line):
                continue  # MEMORY.md points at a topic file, imported on its own
            if item.strip() and not item.strip().startswith("@"):
                out.append(Planned(_clip(item), memory_type, f"{path.name}: {section}",
                                   tags=tags))
        rest = [line for i, line in enumerate(block.split_tail()[0]) if i not in taken]
        for text in _paragraphs(rest):
            if text.startswith("@") and "\n" not in text:
                continue  # `@path/to/import` lines
            out.append(Planned(_clip(text), memory_type, f"{path.name}: {section}", tags=tags))
    return out


def plan_claude(source: Path) -> list[Planned]:
    if source.is_file():
        default = "preference" if source.name.lower() == "memory.md" else "principle"
        return _plan_claude_markdown(source, default, skip_links=default == "preference")
    out: list[Planned] = []
    for path in _files(source):
        if path.name.lower() in ("claude.md", "claude.local.md"):
            out += _plan_claude_markdown(path, "principle", skip_links=False)
            continue
        if path.name.lower() == "memory.md":
            out += _plan_claude_markdown(path, "preference", skip_links=True)
            continue
        fm, doc = _foreign_note(path)
        if fm.get("type") or fm.get("name") or fm.get("description"):
            body = "\n".join(line for b in doc.blocks
                             for line in ([b.heading] if b.level else []) + b.lines).strip()
            title = str(fm.get("name") or fm.get("description") or path.stem)
            description = str(fm.get("description") or "").strip()
            content = "\n\n".join(x for x in (description, body) if x) or title
            out.append(Planned(_clip(content), CLAUDE_TOPIC_TYPES.get(
                str(fm.get("type") or "").lower(), type_for(str(fm.get("type") or ""),
                                                            "context")),
                path.name, title=" ".join(title.split())[:200],
                tags=[t for t in (_tag(path.stem),) if t]))
        else:
            out += _plan_claude_markdown(path, _heading_type(path.stem, "context"),
                                         skip_links=False)
    return out


# --------------------------------------------------------------------------- ocm backup


def plan_ocm_backup(source: Path) -> list[dict[str, str]]:
    """[{path, markdown}] of an `ocm export --format json` file, every path checked."""
    try:
        data = json.loads(_read(source))
    except ValueError as exc:
        raise InvalidInput(f"{source} is not JSON ({exc})") from None
    except RecursionError:
        raise InvalidInput(f"{source}: JSON nested too deeply") from None
    if not isinstance(data, dict) or data.get("format") != "ocm-export" or not isinstance(
            data.get("notes"), list):
        raise InvalidInput(f"{source} is not an `ocm export --format json` file")
    out = []
    for number, note in enumerate(data["notes"], 1):
        rel = note.get("path") if isinstance(note, dict) else None
        text = note.get("markdown") if isinstance(note, dict) else None
        if not isinstance(rel, str) or not isinstance(text, str):
            raise InvalidInput(f"{source}: note {number} needs a path and its markdown")
        parts = rel.split("/")
        if (parts[0] not in ("sessions", "memories", "transcripts") or ".." in parts
                or rel.startswith("/") or "\\" in rel or not rel.endswith(".md") or any(
                    not p or p.startswith(".") for p in parts)):
            raise InvalidInput(f"{source}: note {number} has an unsafe path {rel!r}")
        if len(text.encode("utf-8")) > MAX_NOTE_BYTES:
            raise InvalidInput(f"{source}: note {number} is too large")
        try:
            Document.parse(text, rel)
        except OcmError as exc:
            raise InvalidInput(f"{source}: note {number}: {exc}") from None
        out.append({"path": rel, "markdown": text})
    return out


PLANNERS = {"mcp-memory": plan_mcp_memory, "basic-memory": plan_basic_memory,
            "claude": plan_claude}
