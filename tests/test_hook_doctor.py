"""`ocm doctor` about hosts (issue #27): a configured command that no longer exists (a moved
clone's absolute path, a bare name the PATH lost), and a host wired whose hooks never fired.
Host configs call the stable `ocm-hook` / `ocm` when they are on PATH (an install as a tool)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process


def tool_bin(tmp: Path) -> Path:
    """A folder on PATH holding `ocm` and `ocm-hook`, as `uv tool install` makes one."""
    folder = tmp / "tool-bin"
    folder.mkdir()
    for name in ("ocm", "ocm-hook"):
        (folder / name).symlink_to(h.VENV_BIN / name)
    return folder


def doctor(env: dict[str, str], repo: Path) -> dict[str, dict]:
    out = h.ocm_here(["doctor", "--json"], env, repo)
    return {c["what"]: c for c in json.loads(out.stdout)}


def test_tool_install_writes_bare_commands_and_doctor_follows_them(
        repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    on_path = {**env, "PATH": f"{tool_bin(tmp_path)}{os.pathsep}{env.get('PATH', '')}"}
    assert h.ocm_here(["init", "--agents", "claude-code"], on_path, repo).returncode == 0
    settings = (repo / ".claude" / "settings.json").read_text()
    mcp = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["ocm"]
    assert '"command": "ocm-hook claude-code session-start"' in settings
    assert mcp["command"] == "ocm" and mcp["alwaysLoad"] is True
    assert str(tmp_path) not in settings  # nothing of this machine in a committed config
    checks = doctor(on_path, repo)
    assert checks["claude-code (project)"]["status"] == "ok", checks
    assert checks["claude-code hooks"]["status"] == "warn"
    assert "no hook of it has fired" in checks["claude-code hooks"]["detail"]
    # One hook fires: the warning goes.
    data = h.payload("claude-code", "session-start", repo, "sid-doctor-1")
    fired = h.run_hook(["claude-code", "session-start"], data, on_path, cwd=repo,
                       command=f"{tmp_path / 'tool-bin' / 'ocm-hook'} claude-code session-start")
    assert fired.returncode == 0 and b"additionalContext" in fired.stdout
    checks = doctor(on_path, repo)
    assert "claude-code hooks" not in checks, checks["claude-code hooks"]
    # The tool uninstalled (not on PATH any more): doctor says the command is gone.
    bare_path = {**env, "PATH": os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and p != str(h.VENV_BIN))}
    checks = doctor(bare_path, repo)
    assert checks["claude-code (project)"]["status"] == "warn"
    assert "`ocm-hook`, which is not on PATH" in checks["claude-code (project)"]["detail"]


def test_doctor_names_a_moved_clones_command(repo: Path, env: dict[str, str],
                                             tmp_path: Path) -> None:
    """An install made before tools (absolute paths) keeps working; when its clone goes,
    doctor names the missing program."""
    assert h.ocm_here(["init", "--agents", "claude-code"], env, repo).returncode == 0
    settings = repo / ".claude" / "settings.json"
    gone = tmp_path / "old-clone" / ".venv" / "bin" / "ocm-hook"
    text = settings.read_text()
    data = json.loads(text)
    for groups in data["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = f"{gone} " + handler["command"].split(" ", 1)[1]
    settings.write_text(json.dumps(data, indent=2))
    check = doctor(env, repo)["claude-code (project)"]
    assert check["status"] == "warn" and f"runs {gone}, which no longer exists" in check["detail"]
    assert check["fix"] == "ocm init --agents claude-code"
    # `ocm init` again (the upgrade path) puts a working command back.
    assert h.ocm_here(["init", "--agents", "claude-code"], env, repo).returncode == 0
    assert str(gone) not in settings.read_text()
    assert doctor(env, repo)["claude-code (project)"]["status"] == "ok"
