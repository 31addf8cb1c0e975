"""`make install-check`: ocm installed once as a tool, from this clone, on a clean machine.

In a temporary folder: a fresh venv that holds only pipx (from the package index), then
`pipx install <this clone>` into a temporary PIPX_HOME / bin folder, with a temporary HOME.
With only that bin folder and the system's on PATH (no clone venv), in a new git project:
`ocm init --agents claude-code,copilot` must write the bare `ocm-hook` / `ocm` commands,
a session-start hook must answer with the brief, `ocm doctor` must find the hook on PATH.
Prints one line per check and exits 1 on the first failure. Needs the package index (it is
not part of `make test` or `make e2e`, which run offline)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(argv: list[str], **kw: object) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=1800, **kw)  # type: ignore[call-overload]


def check(ok: bool, what: str, detail: str = "") -> None:
    tail = f": {detail[-800:]}" if detail and not ok else ""
    print(f"{'ok  ' if ok else 'FAIL'} {what}{tail}")
    if not ok:
        sys.exit(1)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ocm-tool-") as tmp:
        t = Path(tmp)
        boot = t / "boot"
        out = run([sys.executable, "-m", "venv", str(boot)])
        check(out.returncode == 0, "a clean venv for pipx", out.stderr)
        out = run([str(boot / "bin" / "pip"), "install", "-q", "pipx"])
        check(out.returncode == 0, "pipx from the package index", out.stderr)
        home, bin_dir = t / "home", t / "bin"
        home.mkdir()
        env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin",
               "PIPX_HOME": str(t / "pipx"), "PIPX_BIN_DIR": str(bin_dir)}
        out = run([str(boot / "bin" / "pipx"), "install", str(ROOT)], env=env)
        check(out.returncode == 0 and (bin_dir / "ocm").exists()
              and (bin_dir / "ocm-hook").exists(), "pipx install <clone>: ocm, ocm-hook",
              out.stderr + out.stdout)
        proj = t / "shop"
        proj.mkdir()
        for argv in (["git", "init", "-q"], ["git", "-c", "user.email=a@b", "-c", "user.name=a",
                                             "commit", "-q", "--allow-empty", "-m", "init"]):
            run(argv, cwd=proj, env=env)
        out = run(["ocm", "init", "--agents", "claude-code,copilot"], cwd=proj, env=env)
        check(out.returncode == 0, "ocm init --agents claude-code,copilot", out.stderr)
        settings = (proj / ".claude" / "settings.json").read_text()
        mcp = json.loads((proj / ".mcp.json").read_text())["mcpServers"]["ocm"]
        copilot = (proj / ".github" / "hooks" / "ocm-copilot.json").read_text()
        check('"ocm-hook claude-code session-start"' in settings and mcp["command"] == "ocm"
              and '"ocm-hook copilot session-start"' in copilot and tmp not in settings + copilot,
              "configs call the bare commands, no path of this machine", settings)
        payload = json.dumps({"session_id": "tool-check-1", "hook_event_name": "SessionStart",
                              "cwd": str(proj), "source": "startup",
                              "transcript_path": str(home / "t.jsonl")})
        out = run(["sh", "-c", "ocm-hook claude-code session-start"], cwd=proj, env=env,
                  input=payload)
        check("Current ocm session id" in out.stdout, "the hook, found on PATH, injects the brief",
              out.stdout + out.stderr)
        out = run(["ocm", "doctor", "--json"], cwd=proj, env=env)
        checks = {c["what"]: c for c in json.loads(out.stdout or "[]")}
        check(checks.get("ocm-hook", {}).get("status") == "ok"
              and checks.get("claude-code (project)", {}).get("status") == "ok",
              "ocm doctor: ocm-hook on PATH, Claude Code wired", out.stdout)


if __name__ == "__main__":
    main()
