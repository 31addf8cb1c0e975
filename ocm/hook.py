"""`ocm-hook`: the entry point agent hooks call. Stdlib only, never raises, always exits 0.

Host-specific handling arrives with the agent integrations; until then each payload is
appended to the vault's hook log so nothing a host sends is lost.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    try:
        payload = sys.stdin.buffer.read(1_000_000) if not sys.stdin.isatty() else b""
        root = os.environ.get("OCM_VAULT") or os.path.join(
            os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd(), ".openCodeMemory")
        if os.path.isdir(root):
            line = b"%d\t%s\t" % (time.time_ns(), " ".join(sys.argv[1:]).encode()) + (
                payload.replace(b"\n", b" ") + b"\n")
            fd = os.open(os.path.join(root, ".hooks.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                         0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
    except Exception:  # noqa: BLE001 - a hook must never break its host
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
