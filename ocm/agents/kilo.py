"""Kilo CLI (`kilo`, npm `@kilocode/cli`), a fork of OpenCode: the same plugin API, payloads
and session tables, under its own names. ocm's OpenCode code wires it (`opencode.Fork`).

What the installed 7.7.7 binary reads (checked in it, and by `make e2e HOSTS=kilo`):
* plugins from `{plugin,plugins}/*.{ts,js}` in its config folders: `.kilo/` or `.kilocode/`
  in the project, `$XDG_CONFIG_HOME/kilo/` for the user; it no longer reads `.opencode/`;
* config from `kilo.json(c)` / `opencode.json(c)` in the project and in those folders
  (ocm writes `.kilo/kilo.json`; user: `~/.config/kilo/kilo.json`), MCP under `mcp` as
  OpenCode's;
* rules from AGENTS.md up from the working folder, and `~/.config/kilo/AGENTS.md`;
* sessions in `$XDG_DATA_HOME/kilo/kilo.db` (`$KILO_DB` overrides; `kilo-<channel>.db`
  outside the release channel), OpenCode's `message` and `part` tables.
The recorded payloads (reference/hosts/captured-2026-11/kilo-7.7.7) are OpenCode 1.18.33's.
"""

from __future__ import annotations

from . import opencode
from .opencode import CAP, EVENTS, Fork, output, parse_transcript

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .base import InstallContext
    from .installer import Step

HOST = "kilo"
KILO = Fork(HOST, "Kilo", "@kilocode/cli", "7.7.7", "kilo", ".kilo", ".kilo/kilo.json",
            "KILO_DB", "https://app.kilo.ai/config.json")
__all__ = ["CAP", "EVENTS", "HOST", "KILO", "detected", "output", "parse_transcript", "plan",
           "transcript_source"]


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    return opencode.plan(ctx, KILO)


def detected(home: Path) -> bool:
    return opencode.detected(home, KILO)


def transcript_source(ev: Any, vault_dir: str, env: dict[str, str]) -> str:
    """The session's transcript, brought up to date from `kilo.db` (see opencode.py)."""
    return opencode.transcript_source(ev, vault_dir, env, KILO)
