"""Obsidian as the dashboard: the `ocm.base` view `ocm init` writes at the vault root.

Bases (core plugin since Obsidian 1.9) are YAML files listing notes by their properties. The
vault is opened in Obsidian as a vault of its own (`.openCodeMemory` is a dot-folder, which
Obsidian never shows from a parent vault), so paths here are relative to the vault root.
A base the person edited is never overwritten: we keep the hash of what we last wrote.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .atomic import atomic_write_text

BASE_NAME = "ocm.base"
STATE_NAME = ".ocm-state.json"  # dot-file: invisible to Obsidian, skipped by the indexer

BASE_TEXT = """\
# openCodeMemory dashboard, written by `ocm init`. Edit it freely: once you change it,
# ocm never overwrites it (delete it and run `ocm init` to get the current default back).
filters:
  and:
    - 'file.ext == "md"'
    - or:
        - 'file.inFolder("memories")'
        - 'file.inFolder("sessions")'
# A session's true start: `started_at` is local time, which after travel or a DST change
# puts an older session after a newer one; `started_at_utc` does not (notes written before
# it existed have only the local time). https://help.obsidian.md/bases/syntax (formulas)
# A memory's `created` and `updated` likewise, by `created_utc` and `updated_utc`.
formulas:
  started: 'if(started_at_utc, date(started_at_utc), date(started_at))'
  created: 'if(created_utc, date(created_utc), date(created))'
  updated: 'if(updated_utc, date(updated_utc), date(updated))'
properties:
  file.name:
    displayName: Note
  formula.started:
    displayName: Started (true order)
views:
  - type: table
    name: Active memories by type
    filters:
      and:
        - 'file.inFolder("memories")'
        - 'status == "active"'
    groupBy:
      property: type
      direction: ASC
    order:
      - file.name
      - title
      - importance
      - files
      - tags
      - session
      - updated
    sort:
      - property: formula.updated
        direction: DESC
  - type: table
    name: Memories by status
    filters:
      and:
        - 'file.inFolder("memories")'
    groupBy:
      property: status
      direction: ASC
    order:
      - file.name
      - type
      - title
      - supersedes
      - superseded_by
      - resolution
      - updated
    sort:
      - property: formula.updated
        direction: DESC
  - type: table
    name: Memories by date
    filters:
      and:
        - 'file.inFolder("memories")'
    order:
      - created
      - type
      - status
      - title
      - files
      - git_sha
    sort:
      - property: formula.created
        direction: DESC
  - type: table
    name: Sessions by date
    filters:
      and:
        - 'file.inFolder("sessions")'
    order:
      - file.name
      - started_at
      - ended_at
      - tool
      - status
      - slug
      - git_sha_start
      - git_sha_end
    sort:
      - property: formula.started
        direction: DESC
  - type: table
    name: Sessions by tool
    filters:
      and:
        - 'file.inFolder("sessions")'
    groupBy:
      property: tool
      direction: ASC
    order:
      - file.name
      - started_at
      - status
      - slug
    sort:
      - property: formula.started
        direction: DESC
  - type: table
    name: Open sessions
    filters:
      and:
        - 'file.inFolder("sessions")'
        - 'status == "open"'
    order:
      - file.name
      - started_at
      - tool
      - slug
    sort:
      - property: formula.started
        direction: DESC
"""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _state(vault_root: Path) -> dict:
    try:
        data = json.loads((vault_root / STATE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_base(vault_root: Path, text: str = BASE_TEXT) -> str:
    """Write `ocm.base`; returns created | updated | unchanged | kept (edited by you)."""
    path = vault_root / BASE_NAME
    state = _state(vault_root)
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    except (OSError, UnicodeDecodeError):
        return "kept (edited by you)"
    if current == text:
        outcome = "unchanged"
    elif current is not None and _digest(current) != state.get("base_sha256"):
        return "kept (edited by you)"
    else:
        atomic_write_text(path, text)
        outcome = "created" if current is None else "updated"
    if state.get("base_sha256") != _digest(text):
        state["base_sha256"] = _digest(text)
        atomic_write_text(vault_root / STATE_NAME, json.dumps(state, indent=2) + "\n")
    return outcome
