"""Nudges: at the right moment a hook asks the host's own model, in one extra turn, to save
the session's memory with `ocm__checkpoint` / `ocm__remember`. ocm itself never calls a model.

`at_stop` runs in a Stop-type hook after the journal and the transcript were folded: it
compares the session note with what it was at the last checkpoint (or the last nudge),
and when the turn did real work the agent did not save, returns a short instruction that
names what happened and the ocm session id. Each host's `output(STOP, text)` turns it into
its own "continue with this instruction" answer. With `nudges: all`, `before_commit` also
gives Claude Code's PreToolUse context before a shell call that runs `git commit`.
`settings.mode` says whether nudges are on.

Stdlib and `ocm.vault` only: this is the hook path (no Whoosh, MCP or numpy).
"""

from __future__ import annotations

from .decide import after_compaction, at_stop, before_commit, is_commit
from .settings import ALL, END, OFF, mode

__all__ = ["ALL", "END", "OFF", "after_compaction", "at_stop", "before_commit", "is_commit",
           "mode"]
