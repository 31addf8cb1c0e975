"""`ocm-hook <host> [<event>]`: the entry point every agent hook calls.

Reads all of stdin, hands it to `ocm.agents.dispatch.run`, prints only what the host accepts
(JSON or nothing) and always exits 0. Stdlib only up to the dispatcher, which imports
neither Whoosh nor MCP (tests check `sys.modules`).
"""

from __future__ import annotations

import os
import sys

from ocm.agents.hook_input import MAX_PAYLOAD_BYTES

# A shell call about to run (Claude Code's and Codex's PreToolUse) gets an answer only
# before a `git commit` (nudges: all); every other call ends here, before the dispatcher and
# its imports are loaded: a process per shell call costs the interpreter's start and little
# more (bench/nudges.py hook-cost; docs/decisions.md).
BEFORE_SHELL_EVENT = "pre-tool-use"


def read_stdin(limit: int) -> bytes:
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return b""
        return sys.stdin.buffer.read(limit + 1)
    except (OSError, ValueError):
        return b""


def run(argv: list[str]) -> str:
    try:
        raw = read_stdin(MAX_PAYLOAD_BYTES)
        if BEFORE_SHELL_EVENT in argv and b"commit" not in raw:
            return ""  # not a commit: nothing to say, nothing imported
        from ocm.agents.dispatch import run as dispatch

        return dispatch(argv, raw)
    except Exception:  # noqa: BLE001 - a hook must never break its host
        return ""


def main(argv: list[str] | None = None) -> None:
    out = run(list(sys.argv[1:] if argv is None else argv))
    try:
        if out:
            sys.stdout.write(out + "\n")
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - a closed pipe is the host's business
        pass
    if os.environ.get("OCM_HOOK_TRACE_MODULES"):
        try:
            with open(os.environ["OCM_HOOK_TRACE_MODULES"], "w", encoding="utf-8") as handle:
                handle.write("\n".join(sorted(sys.modules)))
        except OSError:
            pass
    sys.exit(0)


if __name__ == "__main__":
    main()
