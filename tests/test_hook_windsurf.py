"""Windsurf (Cascade hooks): wiring and a session replayed in the documented payload format
(`agent_action_name`, `trajectory_id`, `tool_info`; no Windsurf program exists here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.markdown import Document  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

TRAJECTORY = "traj-7c1e"


def cascade(action: str, **tool_info) -> bytes:
    return json.dumps({"agent_action_name": action, "trajectory_id": TRAJECTORY,
                       "execution_id": f"exec-{action}", "timestamp": "2026-11-23T13:20:00Z",
                       "tool_info": tool_info}).encode()


def test_windsurf_wiring_round_trip(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**env, "HOME": str(home)}
    hooks_file = repo / ".windsurf" / "hooks.json"
    hooks_file.parent.mkdir()
    hooks_file.write_text('{"hooks": {"post_write_code": [{"command": "./lint.sh"}]}}\n')
    before = hooks_file.read_bytes()
    out = h.ocm_here(["init", "--agents", "windsurf"], env, repo)
    assert out.returncode == 0, out.stderr
    hooks = json.loads(hooks_file.read_text())["hooks"]
    assert set(hooks) == {"pre_user_prompt", "post_read_code", "post_write_code",
                          "post_run_command", "post_cascade_response"}
    assert hooks["post_write_code"][0] == {"command": "./lint.sh"}
    assert hooks["post_write_code"][1]["command"].endswith("ocm-hook windsurf post_write_code")
    rule = (repo / ".windsurf" / "rules" / "ocm.md").read_text()
    assert rule.startswith("---\ntrigger: always_on\n") and "ocm__checkpoint" in rule
    assert not (home / ".codeium").exists()  # MCP is user level: only with --user
    doctor = h.ocm_here(["doctor"], env, repo)
    assert "windsurf" in doctor.stdout
    assert h.ocm_here(["uninstall", "--agents", "windsurf"], env, repo).returncode == 0
    assert hooks_file.read_bytes() == before
    assert not (repo / ".windsurf" / "rules").exists()

    assert h.ocm_here(["init", "--agents", "windsurf", "--user"], env, repo).returncode == 0
    mcp = json.loads((home / ".codeium" / "windsurf" / "mcp_config.json").read_text())
    assert mcp["mcpServers"]["ocm"]["args"] == ["mcp"]
    assert "ocm-hook windsurf" in (home / ".codeium" / "windsurf" / "hooks.json").read_text()
    assert h.ocm_here(["uninstall", "--agents", "windsurf", "--user"], env, repo).returncode == 0
    assert not (home / ".codeium" / "windsurf" / "mcp_config.json").exists()


def test_windsurf_session_from_cascade_payloads(repo: Path, env: dict[str, str]) -> None:
    calls = [
        ("pre_user_prompt", {"user_prompt": "Add a retry to the nightly export"}),
        ("post_read_code", {"file_path": str(repo / "old_parser.py")}),
        ("post_write_code", {"file_path": str(repo / "export" / "retry.py"),
                             "edits": [{"old_string": "", "new_string": "RETRIES = 3\n"}]}),
        ("post_write_code", {"file_path": str(repo / "old_parser.py"),
                             "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}),
        ("post_run_command", {"command_line": "pytest -q", "cwd": str(repo)}),
        ("post_cascade_response", {"response": "Added the retry."}),
    ]
    for action, info in calls:
        out = h.run_hook(["windsurf", action], cascade(action, **info), env, cwd=repo)
        assert out.returncode == 0 and out.stdout == b"", out
    [session] = h.sessions(repo)
    fm = Document.parse(session.read_text()).frontmatter
    assert fm.get("tool") == "windsurf" and fm.get("agent_session_id") == TRAJECTORY
    text = session.read_text()
    assert "Add a retry to the nightly export" in text
    assert "export/retry.py" in text and "old_parser.py" in text
    assert fm.get("edits") == 2 and fm.get("reads") == 1


def test_windsurf_garbage_is_harmless(repo: Path, env: dict[str, str]) -> None:
    for data in (b"", b"[1]", b'{"agent_action_name": "post_write_code", "tool_info": 3}',
                 cascade("post_mystery")):
        out = h.run_hook(["windsurf", "post_write_code"], data, env, cwd=repo)
        assert out.returncode == 0 and out.stdout == b""
    assert h.sessions(repo) == []
