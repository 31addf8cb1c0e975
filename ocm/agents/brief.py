"""The session-start brief, built straight from the notes (no Whoosh on the hook path).

Pinned memories (identity, principles, preferences, lessons, gotchas, decisions, procedures,
context; active only) are read from their type folders in the project and user vaults, the
session to hand over is the newest with content of any tool (`ocm.vault.handover`), and
`ocm.indexer.recall.build_brief` lays them out exactly as `ocm recall` does, within the
budget.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ocm.indexer.hits import Hit
from ocm.indexer.recall import build_brief
from ocm.vault.clock import local_time
from ocm.vault.duplicates import one_per_id
from ocm.vault.errors import OcmError
from ocm.vault.folder import read_document
from ocm.vault.freshness import journal
from ocm.vault.git.staleness import mark_stale
from ocm.vault.handover import last_with_content
from ocm.vault.memories import RECALL_ORDER, MemoryNote
from ocm.vault.store import Vault

if TYPE_CHECKING:
    from ocm.project import Project

MAX_PINNED_FILES = 2000
SNIPPET_CHARS = 400


def _memory_hits(vault: Vault, types: tuple[str, ...] = RECALL_ORDER) -> tuple[list[Hit], int]:
    """Active memories of `types` (in that order, so identity is read first), and how many
    note files were left unread past MAX_PINNED_FILES (a hook must stay fast)."""
    hits: list[Hit] = []
    if not vault.memories_dir.is_dir():
        return hits, 0
    seen = unread = 0
    for memory_type in types:
        folder = vault.memories_dir / memory_type
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            if path.name.startswith("."):
                continue
            seen += 1
            if seen > MAX_PINNED_FILES:
                unread += 1
                continue
            try:
                note = MemoryNote(read_document(path))
            except OcmError:
                continue
            if note.status != "active":
                continue
            content = " ".join(note.content.split())
            hits.append(Hit(
                id=note.id or path.stem, kind="memory", type=note.type, title=note.title or
                content[:120], status=note.status, tool="", scope=note.scope,
                date=local_time(note.updated_at), path=path.resolve(),
                meta={"snippet": content[:SNIPPET_CHARS], "files": note.str_list("files"),
                      "importance": note.importance,
                      "git_sha": str(note.fm.get("git_sha") or "")}))
    return one_per_id(hits, lambda hit: ("", hit.id, hit.path)), unread


def session_brief(project: Project, session_id: str, budget: int, cap: int,
                  compacted: bool = False, tool: str | None = None) -> str:
    budget = max(400, min(budget, cap))
    pinned, unread = _memory_hits(project.vault)
    mark_stale(pinned, project.vault.project_root)  # "verify: src/x.py changed since …"
    if project.user_vault.root.is_dir():
        user_pinned, user_unread = _memory_hits(project.user_vault)
        pinned += user_pinned
        unread += user_unread
    last = last_with_content(project.vault, exclude=session_id)
    notice = ""
    if compacted:
        notice = ("\nThe conversation context was just compacted; this session's note records "
                  f"trigger context_limit. ocm__checkpoint with session_id {session_id} saves "
                  "the goal, completed and pending work so far.")
    brief = build_brief(project.vault.project, pinned, [], last, budget - len(notice),
                        "prompt", session_id, unread=unread, tool=tool)
    if brief.warning:
        journal.log(project.vault.root, brief.warning)
    text = brief.text
    if notice:
        head, _, rest = text.partition("\n")
        first, _, tail = rest.partition("\n")
        text = f"{head}\n{first}{notice}\n{tail}" if first else text + notice
    return text[:cap]


# --------------------------------------------------------------------------- prompt recall

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{2,}")
_STOP_TEXT = (
    "the and for with that this from have what when where which while into about your you "
    "are was were will would should could can not but all any how why who its it's our out "
    "use using used get got make made add fix please then than them they there here just "
    "also some more most very does did done need want like file files code")
_STOP = frozenset(_STOP_TEXT.split())


def _terms(text: str) -> set[str]:
    return {w.lower().strip(".-") for w in _WORD.findall(text or "")} - _STOP


def prompt_memories(project: Project, prompt: str, limit: int, budget: int,
                    threshold: float) -> str:
    """Up to `limit` active memories sharing enough words with the prompt (opt-in)."""
    wanted = _terms(prompt)
    if not wanted or limit <= 0:
        return ""
    scored: list[tuple[float, Any]] = []
    types = tuple(p.name for p in project.vault.memories_dir.iterdir() if p.is_dir()) if (
        project.vault.memories_dir.is_dir()) else ()
    for hit in _memory_hits(project.vault, types)[0]:
        title_terms = _terms(hit.title)
        body_terms = _terms(hit.meta.get("snippet", ""))
        overlap = wanted & (title_terms | body_terms)
        if len(overlap) < 2:
            continue
        score = (len(overlap) + len(wanted & title_terms)) / (len(wanted) + 1)
        if score >= threshold:
            scored.append((score, hit))
    scored.sort(key=lambda pair: -pair[0])
    lines = ["Project memories related to this prompt (ocm):"]
    used = len(lines[0])
    for _, hit in scored[:limit]:
        line = f"- [{hit.type}] {hit.title} — {hit.meta.get('snippet', '')[:200]} (id: {hit.id})"
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines) if len(lines) > 1 else ""

