"""`make install-check`: ocm installed once as a tool, from this clone, on a clean machine,
by each documented route: `pipx install <clone>` and `uv tool install <clone>`.

In a temporary folder: a fresh venv that holds only pipx and uv (from the package index);
per route, a temporary HOME and tool/bin folders. With only that bin folder and the system's
on PATH (no clone venv), in a new git project: `ocm init --agents all` must write the bare
`ocm-hook` / `ocm` commands and no path of this machine into any host's config, a
session-start hook must answer with the brief, `ocm doctor` must find the hook on PATH.
Prints one line per check and exits 1 on the first failure. Needs the package index (it is
not part of `make test` or `make e2e`, which run offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CERTS = "/etc/ssl/certs/ca-certificates.crt"


def run(argv: list[str], **kw: object) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=1800, **kw)  # type: ignore[call-overload]


def check(ok: bool, what: str, detail: str = "") -> None:
    tail = f": {detail[-800:]}" if detail and not ok else ""
    print(f"{'ok  ' if ok else 'FAIL'} {what}{tail}")
    if not ok:
        sys.exit(1)


# Every file `ocm init --agents all` writes in a project (each host's committed config).
CONFIGS = (".mcp.json", ".claude/settings.json", ".cursor/mcp.json", ".cursor/hooks.json",
           ".codex/config.toml", ".codex/hooks.json", ".gemini/settings.json",
           ".vscode/mcp.json", ".github/hooks/ocm.json", ".github/hooks/ocm-copilot.json",
           "opencode.json", ".opencode/plugins/ocm.js", ".windsurf/hooks.json",
           ".kilo/kilo.json", ".kilo/plugins/ocm.js")


def install(route: str, t: Path, env: dict[str, str]) -> None:
    # Each tool in a venv of its own (a pipx beside uv installs through uv).
    boot = t / "boot"
    out = run([sys.executable, "-m", "venv", str(boot)])
    check(out.returncode == 0, f"{route}: a clean venv for it", out.stderr)
    out = run([str(boot / "bin" / "pip"), "install", "-q", route])
    check(out.returncode == 0, f"{route}: from the package index", out.stderr)
    bin_dir = Path(env["PATH"].split(":")[0])
    if route == "pipx":
        env.update(PIPX_HOME=str(t / "pipx"), PIPX_BIN_DIR=str(bin_dir))
        out = run([str(boot / "bin" / "pipx"), "install", str(ROOT)], env=env)
    else:
        # uv reads no pip.conf: PyPI, trusting the system's certificates as pip does here.
        env.update(UV_TOOL_DIR=str(t / "uv-tools"), UV_TOOL_BIN_DIR=str(bin_dir),
                   UV_CACHE_DIR=str(t / "uv-cache"), UV_PYTHON_DOWNLOADS="never",
                   SSL_CERT_FILE=os.environ.get("SSL_CERT_FILE", CERTS), UV_NATIVE_TLS="1",
                   UV_SYSTEM_CERTS="1")
        out = run([str(boot / "bin" / "uv"), "tool", "install", "--python", sys.executable,
                   str(ROOT)], env=env)
    check(out.returncode == 0 and (bin_dir / "ocm").exists()
          and (bin_dir / "ocm-hook").exists(), f"{route}: install <clone>: ocm, ocm-hook",
          out.stderr + out.stdout)


def route_check(route: str, t: Path) -> None:
    """Install by `route` into its own HOME and bin folder, then wire a project and run it."""
    t.mkdir()
    home, bin_dir = t / "home", t / "bin"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    install(route, t, env)
    env = {k: v for k, v in env.items() if not k.startswith(("PIPX_", "UV_", "SSL_"))}
    proj = t / "shop"
    proj.mkdir()
    for argv in (["git", "init", "-q"], ["git", "-c", "user.email=a@b", "-c", "user.name=a",
                                         "commit", "-q", "--allow-empty", "-m", "init"]):
        run(argv, cwd=proj, env=env)
    out = run(["ocm", "init", "--agents", "all"], cwd=proj, env=env)
    check(out.returncode == 0, f"{route}: ocm init --agents all", out.stderr)
    texts = {rel: (proj / rel).read_text() for rel in CONFIGS}
    mcp = json.loads(texts[".mcp.json"])["mcpServers"]["ocm"]
    kilo = json.loads(texts[".kilo/kilo.json"])["mcp"]["ocm"]
    # The project's own folder may appear (some hosts get OCM_PROJECT_DIR); no other path of
    # this machine may: not the clone, not the tool's install.
    leaks = [rel for rel, text in texts.items()
             if str(t) in text.replace(str(proj), "") or str(ROOT) in text]
    check('"ocm-hook claude-code session-start"' in texts[".claude/settings.json"]
          and mcp["command"] == "ocm" and kilo["command"] == ["ocm", "mcp"]
          and '"ocm-hook copilot session-start"' in texts[".github/hooks/ocm-copilot.json"]
          and 'const HOOK = ["ocm-hook"];' in texts[".kilo/plugins/ocm.js"] and not leaks,
          f"{route}: every host's config calls the bare commands, no path of this machine",
          f"paths of this machine in {leaks}" if leaks else texts[".claude/settings.json"])
    payload = json.dumps({"session_id": "tool-check-1", "hook_event_name": "SessionStart",
                          "cwd": str(proj), "source": "startup",
                          "transcript_path": str(home / "t.jsonl")})
    out = run(["sh", "-c", "ocm-hook claude-code session-start"], cwd=proj, env=env,
              input=payload)
    check("Current ocm session id" in out.stdout,
          f"{route}: the hook, found on PATH, injects the brief", out.stdout + out.stderr)
    out = run(["ocm", "doctor", "--json"], cwd=proj, env=env)
    checks = {c["what"]: c for c in json.loads(out.stdout or "[]")}
    check(checks.get("ocm-hook", {}).get("status") == "ok"
          and checks.get("claude-code (project)", {}).get("status") == "ok"
          and checks.get("kilo (project)", {}).get("status") == "ok",
          f"{route}: ocm doctor: ocm-hook on PATH, Claude Code and Kilo wired", out.stdout)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ocm-tool-") as tmp:
        for route in ("pipx", "uv"):
            route_check(route, Path(tmp) / route)


if __name__ == "__main__":
    main()
