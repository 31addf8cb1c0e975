"""CPU cost of the prompt hook, which redacts every prompt, against `python -c pass`.

    nice -n 10 .venv/bin/python bench/redaction_hook.py [--runs 25]

The recorded Claude Code UserPromptSubmit payload
(tests/fixtures/hooks/claude-code/user-prompt-submit.json), its prompt replaced by ~1 KB of
ordinary text holding three secrets of the stress corpus, sent to a fresh `ocm-hook claude-code
user-prompt-submit` in a temp git repo with a vault; interleaved with `python -c pass` of the
same interpreter. CPU time (user + sys of each child, `RUSAGE_CHILDREN`), medians; the load
average is printed because wall time on a shared machine means little. Never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "bench"))

import stress  # noqa: E402

PAYLOAD = REPO / "tests" / "fixtures" / "hooks" / "claude-code" / "user-prompt-submit.json"


def _cpu_ms(argv: list[str], data: bytes, env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, input=data, capture_output=True, env=env, cwd=cwd, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ocm-redaction-hook-"))
    try:
        repo = tmp / "proj"
        repo.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(
            ("CLAUDE", "CURSOR", "GEMINI", "CODEX", "OCM_"))}
        env["OCM_HOME"] = str(tmp / "ocm-home")
        for cmd in (["git", "init", "-q"], ["git", "config", "user.email", "b@x"],
                    ["git", "config", "user.name", "b"],
                    ["git", "commit", "-q", "--allow-empty", "-m", "init"]):
            subprocess.run(cmd, cwd=repo, check=True, capture_output=True)
        subprocess.run([str(BIN / "ocm"), "init", "--agents", "none"], cwd=repo, env=env,
                       check=True, capture_output=True)
        corpus = stress.secret_corpus()
        secrets = [before + secret + after for _k, before, secret, after in corpus[::40]][:3]
        prose = ("Refactor the token refresh in src/auth/session.py so the password reset "
                 "link expires after 15 minutes; keep max_token: 100000 and the commit "
                 "3f9c2a7e5b1d4c8e9f0a6b2c3d4e5f6071829304 as the base. ")
        payload = json.loads(PAYLOAD.read_text())
        payload["cwd"] = str(repo)
        payload["session_id"] = "bench-redaction-hook"
        payload["prompt"] = (prose * 4 + "\n".join(secrets) + "\n" + prose * 2)[:1200]
        data = json.dumps(payload).encode()
        hook = [str(BIN / "ocm-hook"), "claude-code", "user-prompt-submit"]
        floor = [sys.executable, "-c", "pass"]
        for _ in range(3):  # warm: .pyc files, page cache
            _cpu_ms(hook, data, env, repo)
            _cpu_ms(floor, b"", env, repo)
        hook_ms, floor_ms = [], []
        for _ in range(args.runs):
            hook_ms.append(_cpu_ms(hook, data, env, repo))
            floor_ms.append(_cpu_ms(floor, b"", env, repo))
        h, f = statistics.median(hook_ms), statistics.median(floor_ms)
        print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs each, CPU medians")
        print(f"prompt hook {h:.1f} ms, python -c pass {f:.1f} ms: {h / f:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
