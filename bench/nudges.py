"""What an end-of-turn nudge costs, per host, read from the last `make e2e` run (issue #25).

For each host session the e2e harness kept (`$OCM_E2E_CACHE/last-run/<host>N/`): the model
requests the host sent after the nudge reached the model (the nudge's whole cost in
requests), and the characters of each nudge the hooks sent (`nudged (N chars)` in the
vault's hook.log). Run `make e2e` first, then `PYTHONPATH=. .venv/bin/python bench/nudges.py`
(the same `OCM_E2E_CACHE`).

`bench/nudges.py hook-cost [N]`: what the PreToolUse(Bash) hook costs per shell call (issue
#25): the median wall time of N runs (default 40) of `ocm-hook claude-code pre-tool-use`
(and Codex's) with a shell call that is not a commit, beside a bare `python -c pass` (the
interpreter's own start) and a `git commit` call with nudges off, in a fresh project with a
vault. No model, no network."""

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


def _median_ms(argv: list[str], payload: bytes, cwd: Path, env: dict[str, str],
               runs: int) -> float:
    import statistics
    import subprocess
    import time

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=payload, cwd=cwd, env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def hook_cost(runs: int) -> int:
    import os
    import subprocess
    import tempfile

    bin_dir = Path(sys.executable).parent
    hook = str(bin_dir / "ocm-hook")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        env = {**os.environ, "HOME": tmp, "OCM_HOME": str(Path(tmp) / ".ocm")}
        env.pop("OCM_NUDGES", None)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run([str(bin_dir / "ocm"), "init", "--agents", "none"], cwd=root, env=env,
                       check=True, capture_output=True)

        def payload(command: str) -> bytes:
            return json.dumps({"session_id": "bench", "cwd": str(root),
                               "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": command}}).encode()

        rows = [("python -c pass (interpreter start)", [sys.executable, "-c", "pass"],
                 b"", env)]
        for host in ("claude-code", "codex"):
            rows.append((f"ocm-hook {host} pre-tool-use, `pytest -q`",
                         [hook, host, "pre-tool-use"], payload("pytest -q"), env))
        rows.append(("ocm-hook claude-code pre-tool-use, `git commit`, nudges off",
                     [hook, "claude-code", "pre-tool-use"], payload("git commit -m x"),
                     {**env, "OCM_NUDGES": "off"}))
        print(f"| call | median ms ({runs} runs) |\n|---|---|")
        for label, argv, data, environ in rows:
            print(f"| {label} | {_median_ms(argv, data, root, environ, runs):.1f} |")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["hook-cost"]:
        return hook_cost(int(sys.argv[2]) if len(sys.argv) > 2 else 40)
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
