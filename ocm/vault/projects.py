"""The registry of project vaults (`~/.openCodeMemory/registry.json`): register, read, list
and prune.

`ocm init` registers a project's vault; `--scope global` searches every registered vault.
Entries whose vault folder is gone (project deleted or moved) or that repeat a vault are
pruned on request, never silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import locks
from .atomic import atomic_write_text, locked
from .clock import format_timestamp, now
from .paths import user_home
from .store import Vault


def registry_path() -> Path:
    return user_home() / "registry.json"


def read_registry() -> list[dict[str, str]]:
    try:
        data = json.loads(registry_path().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []
    return [e for e in data if isinstance(e, dict) and isinstance(e.get("vault"), str)] if (
        isinstance(data, list)) else []


def register_vault(project: str, root: Path, vault: Path) -> bool:
    """Add a project vault to the registry; False if it was already there."""
    home = user_home()
    with locked(locks.folder(home), locks.REGISTRY):
        entries = read_registry()
        if any(Path(e["vault"]) == vault for e in entries):
            return False
        entries.append({
            "project": project, "project_root": str(root), "vault": str(vault),
            "registered_at": format_timestamp(now()),
        })
        atomic_write_text(registry_path(), json.dumps(entries, indent=2) + "\n")
    return True


def write_registry(entries: list[dict[str, str]]) -> None:
    with locked(locks.folder(user_home()), locks.REGISTRY):
        atomic_write_text(registry_path(), json.dumps(entries, indent=2) + "\n")


def _key(path: str) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError):
        return path


def list_projects(current: Path | None = None) -> list[dict[str, Any]]:
    """Every registry entry with whether its vault exists and how many notes it holds."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    here = _key(str(current)) if current else None
    for entry in read_registry():
        key = _key(entry["vault"])
        vault_dir = Path(entry["vault"])
        exists = vault_dir.is_dir()
        sessions = memories = 0
        if exists:
            vault = Vault(vault_dir, entry.get("project") or vault_dir.parent.name)
            for rel in vault.note_signatures():
                if rel.startswith("sessions/"):
                    sessions += 1
                elif rel.startswith("memories/"):
                    memories += 1
        problem = None if exists else "vault folder is missing"
        if key in seen:
            problem = "duplicate entry"
        seen.add(key)
        out.append({"project": entry.get("project") or vault_dir.parent.name,
                    "project_root": entry.get("project_root") or str(vault_dir.parent),
                    "vault": entry["vault"], "registered_at": entry.get("registered_at"),
                    "exists": exists, "sessions": sessions, "memories": memories,
                    "current": key == here, "problem": problem})
    return out


def prune(dry_run: bool = False) -> list[dict[str, Any]]:
    """Drop entries whose vault is missing or repeated; returns what was (or would be) removed."""
    rows = list_projects()
    removed = [row for row in rows if row["problem"]]
    if removed and not dry_run:
        keep_vaults = {_key(r["vault"]) for r in rows if not r["problem"]}
        kept: list[dict[str, str]] = []
        taken: set[str] = set()
        for entry in read_registry():
            key = _key(entry["vault"])
            if key in keep_vaults and key not in taken:
                taken.add(key)
                kept.append(entry)
        write_registry(kept)
    return removed
