"""From a parsed note to the fields the index stores and searches."""

from __future__ import annotations

from datetime import datetime
from itertools import chain, islice
from typing import Any

from ocm.vault.clock import instant, parse_timestamp
from ocm.vault.links import unlink
from ocm.vault.markdown import Document
from ocm.vault.memories import MemoryNote
from ocm.vault.sessions import CHANGE_TYPES, SessionNote

from .analysis import code_analyzer, tokens
from .chunks import memory_field, note_chunks, session_field

SKETCH_TOKENS = 80
SNIPPET_CHARS = 400
_SESSION_SECTIONS_ELSEWHERE = {"goal", "todos", "files touched", "work done",
                               "architecture decisions", "memories"}


def _epoch(value: datetime | None) -> int:
    return int(value.timestamp()) if value else 0


def _strs(value: Any) -> list[str]:
    # YAML turns `tags: [api, 429]` into an int; every list entry is stringified.
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def _sketch(*texts: str) -> str:
    """The first SKETCH_TOKENS distinct index terms of the texts, space-separated (terms
    hold no space): one string unpickles ~3x faster than a list of 80, and a search
    unpickles the stored fields of ~30 notes it never shows (`Hit.sketch` splits it)."""
    # (every term kept in order by `dict.fromkeys` in C, then the first ones taken: the
    # texts' terms are made whole anyway, a loop stopping at the 80th cost more)
    return " ".join(islice(dict.fromkeys(chain.from_iterable(map(tokens, texts))),
                           SKETCH_TOKENS))


# A title or goal a person pasted megabytes into (a hand-edited note) is indexed and shown
# only this far: every search loads the stored fields of its hits.
MAX_TITLE_CHARS = 2_000
SHOWN_TITLE_CHARS = 200


def session_fields(doc: Document, fallback_id: str) -> dict[str, Any]:
    note = SessionNote(doc)
    fm = note.fm
    files = note.files()
    goal = note.goal[:MAX_TITLE_CHARS]
    pending = note.items("work to be completed")
    todos = "\n".join(note.items("work completed") + pending)
    decisions = doc.section_text("architecture decisions")
    summary = doc.section_text("work done")
    # (the chunks first: `body` is made of their sections' texts, analysed once)
    chunks = note_chunks(doc, session_field, headed=True)
    rest = []
    for block in doc.blocks:
        if block.level == 2 and block.key not in _SESSION_SECTIONS_ELSEWHERE:
            rest += [block.title, block.text()]
    rest += [b.text() for b in doc.blocks if b.level == 0]
    rest += [str(fm.get("slug") or "")]
    started = instant(fm.get("started_at_utc"), fm.get("started_at"))  # right across zones
    title = goal.split("\n")[0].strip() or str(fm.get("slug") or fm.get("id") or fallback_id)
    meta = {
        "title": title[:SHOWN_TITLE_CHARS], "files": [f"{p}" for p in files][:20],
        "changes": {c: sum(1 for v in files.values() if v == c) for c in CHANGE_TYPES},
        "pending": pending[:20],
        "ended_at": fm.get("ended_at") and str(parse_timestamp(fm.get("ended_at")) or ""),
        "agent_session_id": str(fm.get("agent_session_id") or ""),
        "tags": _strs(fm.get("tags")), "sketch": _sketch(goal, todos),
        "author": str(fm.get("author") or ""),
    }
    return {
        "id": str(fm.get("id") or fallback_id), "kind": "session", "type": "session",
        "status": str(fm.get("status") or "open"), "tool": str(fm.get("tool") or ""),
        "scope": "project", "date": _epoch(started), "meta": meta,
        "goal": goal, "decisions": decisions, "todos": todos,
        "files": " ".join(files), "work_summary": summary, "content": "",
        "body": code_analyzer().joined(rest),
        "tags": ",".join(_strs(fm.get("tags"))),
        "chunks": chunks,
    }


def memory_fields(doc: Document, fallback_id: str, scope: str) -> dict[str, Any]:
    note = MemoryNote(doc)
    fm = note.fm
    files = note.str_list("files")
    content = note.content
    created = note.created_at  # the true instant: right across time-zone changes
    title = note.title[:MAX_TITLE_CHARS]
    meta = {
        "title": title[:SHOWN_TITLE_CHARS] or content.split("\n")[0][:120], "files": files[:20],
        "importance": note.importance, "key": note.key,
        "session": unlink(fm.get("session")),
        "supersedes": unlink(fm.get("supersedes")),
        "superseded_by": unlink(fm.get("superseded_by")),
        "resolution": str(fm.get("resolution") or ""),
        "updated": str(note.updated or ""), "git_sha": str(fm.get("git_sha") or ""),
        "tags": note.str_list("tags"), "sketch": _sketch(title, content),
        "origin_type": str(fm.get("origin_type") or ""),
        "author": str(fm.get("author") or ""),
        "snippet": " ".join(content.split())[:SNIPPET_CHARS],
    }
    return {
        "id": note.id or fallback_id, "kind": "memory", "type": note.type,
        "status": note.status, "tool": "", "scope": str(fm.get("scope") or scope),
        "date": _epoch(created), "meta": meta, "goal": title, "decisions": "",
        "todos": "", "files": " ".join(files), "work_summary": "", "content": content,
        "body": "",
        "tags": ",".join(note.str_list("tags")),
        "chunks": note_chunks(doc, memory_field, headed=True),
    }


def transcript_fields(doc: Document, fallback_id: str) -> dict[str, Any]:
    """A transcript note: every turn's text in `body` (the lowest boost: a conversation
    weighs less than the curated notes made from it)."""
    fm = doc.frontmatter.data
    text = "\n".join(block.title + "\n" + block.text() if block.level else block.text()
                     for block in doc.blocks)
    session = unlink(fm.get("session"))
    meta: dict[str, Any] = {"title": f"Transcript of {session or fallback_id}", "files": [],
            "session": session, "turns": fm.get("turns") or 0,
            "snippet": " ".join(text.split())[:SNIPPET_CHARS]}
    return {
        "id": str(fm.get("id") or fallback_id), "kind": "transcript", "type": "transcript",
        "status": "active", "tool": str(fm.get("tool") or ""), "scope": "project",
        "date": _epoch(instant(fm.get("started_at_utc"), fm.get("started_at"))), "meta": meta,
        "goal": "",
        "decisions": "", "todos": "", "files": "", "work_summary": "", "content": "",
        "body": text, "tags": "", "chunks": note_chunks(doc, _transcript_field),
    }


def _transcript_field(_section: Any) -> str:
    """Every turn of a transcript is indexed in `body`."""
    return "body"
