"""What an end-of-turn nudge costs, per host, read from the last `make e2e` run (issue #25).

For each host session the e2e harness kept (`$OCM_E2E_CACHE/last-run/<host>N/`): the model
requests the host sent after the nudge reached the model (the nudge's whole cost in
requests), and the characters of each nudge the hooks sent (`nudged (N chars)` in the
vault's hook.log). Run `make e2e` first, then `PYTHONPATH=. .venv/bin/python bench/nudges.py`
(the same `OCM_E2E_CACHE`)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ocm.agents.nudge.message import MARKER
from tests_e2e.hosts import CACHE, HOSTS

EVENT = {"claude-code": "Stop (block + reason)", "codex": "Stop (block + reason)",
         "gemini": "AfterAgent (deny + reason)", "opencode": "none"}


def measure(folder: Path) -> tuple[int, int, list[int]]:
    """(requests in the session, requests from the first that carries the nudge on, nudge
    sizes in characters)."""
    lines = (folder / "requests.jsonl").read_text().splitlines()
    bodies = [json.dumps(json.loads(line)["body"]) for line in lines if line.strip()]
    # Requests without tools (titles, summaries) do not count: only the conversation's.
    turns = [b for b in bodies if '"tools"' in b]
    first = next((i for i, b in enumerate(turns) if MARKER in b), None)
    log = folder / "shop" / ".openCodeMemory" / ".hooks" / "hook.log"
    sizes = [int(n) for n in re.findall(r"nudged \((\d+) chars\)",
                                        log.read_text() if log.exists() else "")]
    return len(turns), (len(turns) - first) if first is not None else 0, sizes


def main() -> int:
    root = CACHE / "last-run"
    if not root.is_dir():
        print(f"no e2e run under {root}: run `make e2e` first", file=sys.stderr)
        return 1
    print("| host (version) | event used | model requests in the session | requests added "
          "by the nudge | nudges sent | characters injected |")
    print("|---|---|---|---|---|---|")
    for name, host in HOSTS.items():
        runs = sorted(root.glob(f"{name}[0-9]*"))
        if not runs:
            continue
        total, added, sizes = measure(runs[-1])
        print(f"| {name} ({host.version}) | {EVENT.get(name, '?')} | {total} | {added} | "
              f"{len(sizes)} | {', '.join(map(str, sizes)) or 0} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
