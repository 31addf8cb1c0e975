"""Slice 3: `ocm init --agents`, `ocm uninstall`, `ocm doctor` on projects that already have
their own agent configs: other entries untouched, idempotent, byte-identical after uninstall."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402

from ocm.cli.main import cli  # noqa: E402

EXISTING = {
    ".mcp.json": '{\n    "mcpServers": {\n        "github": {\n            "command": "npx",\n'
                 '            "args": ["-y", "@modelcontextprotocol/server-github"]\n'
                 '        }\n    }\n}',
    ".claude/settings.json": json.dumps({
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "npx prettier --write"}]}]}}, indent=2) + "\n",
    "CLAUDE.md": "# Project rules\n\nUse tabs.\n",
    ".cursor/mcp.json": '{"mcpServers": {}}\n',
    ".cursor/hooks.json": json.dumps({"version": 1, "hooks": {"afterFileEdit": [
        {"command": "./fmt.sh"}]}}, indent=2) + "\n",
    ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nPrefer small functions.\n",
    ".codex/config.toml": '# my codex config\nmodel = "gpt-5-codex"  # favourite\n\n'
                          '[mcp_servers.docs]\ncommand = "docs-mcp"\n',
    "AGENTS.md": "# Agents\nBe brief.",
    ".gemini/settings.json": json.dumps({"theme": "GitHub", "mcpServers": {
        "x": {"command": "y"}}}, indent=2) + "\n",
    ".vscode/mcp.json": json.dumps({"servers": {"other": {"type": "http",
                                                          "url": "https://x.example"}},
                                    "inputs": []}, indent=4) + "\n",
    ".github/hooks/other.json": '{"hooks": {}}\n',
    "opencode.json": json.dumps({"$schema": "https://opencode.ai/config.json",
                                 "model": "anthropic/claude-sonnet-4-5",
                                 "mcp": {"jira": {"type": "remote",
                                                  "url": "https://jira.example/mcp"}}},
                                indent=2) + "\n",
    ".opencode/plugins/notify.js": "export const Notify = async () => ({});\n",
    ".kilo/kilo.json": json.dumps({"$schema": "https://app.kilo.ai/config.json",
                                   "mcp": {"jira": {"type": "remote",
                                                    "url": "https://jira.example/mcp"}}},
                                  indent=2) + "\n",
}
AGENT_FILES = [".mcp.json", ".claude/settings.json", "CLAUDE.md", ".cursor/mcp.json",
               ".cursor/hooks.json", ".cursor/rules/ocm.mdc", ".codex/config.toml",
               ".codex/hooks.json", "AGENTS.md", ".gemini/settings.json", "GEMINI.md",
               ".vscode/mcp.json", ".github/hooks/ocm.json", "opencode.json",
               ".opencode/plugins/ocm.js", ".windsurf/hooks.json", ".windsurf/rules/ocm.md",
               ".github/hooks/ocm-copilot.json", ".kilo/kilo.json", ".kilo/plugins/ocm.js",
               ".agents/mcp_config.json", ".agents/rules/ocm.md",
               ".agents/skills/ocm-checkpoint/SKILL.md"]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts and ".openCodeMemory" not in p.parts
            and p.name != ".gitignore"}  # the vault's own ignore line stays with the vault


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = h.make_repo(tmp_path / "proj")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":/usr/bin:/bin")
    monkeypatch.chdir(root)
    return root


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def write_existing(root: Path) -> None:
    for rel, text in EXISTING.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_round_trip_on_existing_configs(repo: Path) -> None:
    write_existing(repo)
    h.git(repo, "add", ".")
    h.git(repo, "commit", "-qm", "configs")
    before = snapshot(repo)
    result = invoke("init", "--agents", "all", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {a["host"] for a in report["agents"]} == {"claude-code", "cursor", "codex",
                                                      "gemini", "vscode", "opencode",
                                                      "windsurf", "copilot", "qwen",
                                                      "droid", "kilo", "antigravity"}
    assert all(f["action"] in ("created", "updated", "unchanged")
               for a in report["agents"] for f in a["files"]), report
    # ocm and ocm-hook are on PATH (the fixture): configs call them by name, as on any
    # teammate's machine (issue #27).
    hook_exe = "ocm-hook"

    mcp = json.loads((repo / ".mcp.json").read_text())
    assert set(mcp["mcpServers"]) == {"github", "ocm"}
    assert mcp["mcpServers"]["ocm"]["args"] == ["mcp"]
    assert mcp["mcpServers"]["ocm"]["command"] == "ocm"
    settings = json.loads((repo / ".claude/settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test)"]}
    post = settings["hooks"]["PostToolUse"]
    assert post[0]["hooks"][0]["command"] == "npx prettier --write"
    assert post[1]["hooks"][0]["command"] == f"{hook_exe} claude-code post-tool-use"
    assert set(settings["hooks"]) >= {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop",
                                      "SessionEnd", "PostToolUseFailure"}
    assert settings["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] >= 5
    claude_md = (repo / "CLAUDE.md").read_text()
    assert claude_md.startswith(EXISTING["CLAUDE.md"]) and "ocm__checkpoint" in claude_md
    toml_text = (repo / ".codex/config.toml").read_text()
    assert toml_text.startswith(EXISTING[".codex/config.toml"])  # comments kept
    config = tomllib.loads(toml_text)
    assert set(config["mcp_servers"]) == {"docs", "ocm"} and config["model"] == "gpt-5-codex"
    assert json.loads((repo / ".codex/hooks.json").read_text())["hooks"]["PostToolUse"][0][
        "matcher"].startswith("apply_patch")
    gemini = json.loads((repo / ".gemini/settings.json").read_text())
    assert gemini["theme"] == "GitHub" and set(gemini["mcpServers"]) == {"x", "ocm"}
    assert gemini["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] == 15_000  # milliseconds
    vscode = json.loads((repo / ".vscode/mcp.json").read_text())
    assert set(vscode["servers"]) == {"other", "ocm"} and vscode["inputs"] == []
    # No folder of this machine in the committed file: VS Code expands the variable.
    assert vscode["servers"]["ocm"]["env"] == {"OCM_PROJECT_DIR": "${workspaceFolder}"}
    cursor_mcp = json.loads((repo / ".cursor/mcp.json").read_text())
    assert cursor_mcp["mcpServers"]["ocm"]["env"] == {"OCM_PROJECT_DIR": "${workspaceFolder}"}
    # Every committed config is the same on a teammate's machine: none names this clone's
    # folder (Antigravity alone, which starts its servers elsewhere, issue #27).
    named = sorted(rel for rel in AGENT_FILES + [".qwen/settings.json", ".factory/mcp.json",
                                                 ".factory/settings.json"]
                   if (repo / rel).is_file() and str(repo) in (repo / rel).read_text())
    assert named == [".agents/mcp_config.json"], named
    cursor_hooks = json.loads((repo / ".cursor/hooks.json").read_text())
    assert cursor_hooks["version"] == 1
    assert [x["command"] for x in cursor_hooks["hooks"]["afterFileEdit"]] == [
        "./fmt.sh", f"{hook_exe} cursor after-file-edit"]
    assert (repo / ".cursor/rules/ocm.mdc").read_text().startswith("---\n")
    assert "ocm-hook vscode" in (repo / ".github/hooks/ocm.json").read_text()
    agents_md = (repo / "AGENTS.md").read_text()
    assert agents_md.startswith("# Agents\nBe brief.\n") and agents_md.count("ocm:begin") == 1
    opencode = json.loads((repo / "opencode.json").read_text())
    assert opencode["model"] == "anthropic/claude-sonnet-4-5"
    assert set(opencode["mcp"]) == {"jira", "ocm"}
    assert opencode["mcp"]["ocm"]["type"] == "local"
    assert opencode["mcp"]["ocm"]["command"][1:] == ["mcp"]
    assert opencode["mcp"]["ocm"]["command"][0] == "ocm"
    plugin = (repo / ".opencode/plugins/ocm.js").read_text()
    assert json.dumps([hook_exe]) in plugin and "ocm-managed" in plugin
    assert (repo / ".opencode/plugins/notify.js").read_text() == EXISTING[
        ".opencode/plugins/notify.js"]
    kilo = json.loads((repo / ".kilo/kilo.json").read_text())
    assert set(kilo["mcp"]) == {"jira", "ocm"} and kilo["mcp"]["ocm"] == opencode["mcp"]["ocm"]
    kilo_plugin = (repo / ".kilo/plugins/ocm.js").read_text()
    assert '"kilo", event' in kilo_plugin and '"opencode", event' in plugin
    assert "@kilocode/cli 7.7.7" in kilo_plugin

    after_first = snapshot(repo)
    again = invoke("init", "--agents", "all", "--json")
    assert again.exit_code == 0
    assert {f["action"] for a in json.loads(again.output)["agents"] for f in a["files"]} == {
        "unchanged"}
    assert snapshot(repo) == after_first  # idempotent: a second run changes nothing

    gone = invoke("uninstall", "--json")
    assert gone.exit_code == 0, gone.output
    assert snapshot(repo) == before  # byte-identical, created files removed
    assert (repo / ".openCodeMemory" / "sessions").is_dir()  # the notes stay


def test_fresh_project_uninstall_removes_everything(repo: Path) -> None:
    before = snapshot(repo)
    assert invoke("init", "--agents", "all").exit_code == 0
    for rel in AGENT_FILES:
        assert (repo / rel).is_file(), rel
    assert invoke("uninstall", "--yes").exit_code == 0
    assert snapshot(repo) == before
    for folder in (".claude", ".cursor", ".codex", ".gemini", ".vscode", ".github", ".kilo",
                   ".agents"):
        assert not (repo / folder).exists()


def test_jsonc_file_is_never_rewritten(repo: Path) -> None:
    path = repo / ".vscode" / "mcp.json"
    path.parent.mkdir()
    text = '{\n  // my servers\n  "servers": {},\n}\n'
    path.write_text(text)
    result = invoke("init", "--agents", "vscode", "--json")
    assert result.exit_code == 0
    files = json.loads(result.output)["agents"][0]["files"]
    skipped = [f for f in files if f["path"].endswith("mcp.json")][0]
    assert skipped["action"] == "skipped" and '"ocm"' in skipped["detail"]
    assert path.read_text() == text
    assert invoke("uninstall", "--agents", "vscode").exit_code == 0
    assert path.read_text() == text


def test_partial_agents_and_unknown_name(repo: Path) -> None:
    result = invoke("init", "--agents", "claude,gemini", "--json")
    assert result.exit_code == 0
    assert [a["host"] for a in json.loads(result.output)["agents"]] == ["claude-code", "gemini"]
    assert (repo / ".mcp.json").exists() and not (repo / ".cursor").exists()
    bad = CliRunner().invoke(cli, ["init", "--agents", "emacs"])
    assert bad.exit_code == 1 and "unknown agent 'emacs'" in bad.output


def test_detection_without_agents_flag_never_prompts(repo: Path, tmp_path: Path) -> None:
    result = invoke("init", "--json")  # CliRunner's stdin is not a terminal
    assert result.exit_code == 0 and json.loads(result.output)["agents"] == []
    (tmp_path / "home" / ".cursor").mkdir()
    result = invoke("init", "--json")
    assert [a["host"] for a in json.loads(result.output)["agents"]] == ["cursor"]
    assert (repo / ".cursor" / "hooks.json").is_file()


def test_user_level_round_trip(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n')
    before = snapshot(home)
    assert invoke("init", "--agents", "claude-code,codex,gemini", "--user").exit_code == 0
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and "SessionStart" in data["hooks"]
    assert (home / ".codex" / "config.toml").is_file()
    assert not (repo / ".claude").exists()
    assert invoke("uninstall", "--user", "--agents", "claude-code,codex,gemini").exit_code == 0
    assert snapshot(home) == before


def test_doctor(repo: Path) -> None:
    assert invoke("init", "--agents", "all").exit_code == 0
    result = invoke("doctor", "--json")
    assert result.exit_code == 0, result.output
    checks = {c["what"]: c for c in json.loads(result.output)}
    assert checks["vault"]["status"] == "ok"
    for host in ("claude-code", "cursor", "codex", "gemini", "vscode", "kilo"):
        assert checks[f"{host} (project)"]["status"] == "ok", checks
    (repo / ".cursor" / "hooks.json").write_text('{"version": 1, "hooks": {}}\n')
    broken = repo / ".openCodeMemory" / "sessions" / "2026-01-01_00-00_x.md"
    broken.write_text("---\nid: [unclosed\n---\n")
    result = invoke("doctor", "--json")
    assert result.exit_code == 1
    checks = {c["what"]: c for c in json.loads(result.output)}
    assert checks["cursor (project)"]["status"] == "warn"
    assert "ocm init --agents cursor" in checks["cursor (project)"]["fix"]
    assert any(c["status"] == "fail" and "2026-01-01_00-00_x" in c["what"]
               for c in checks.values())


def test_partial_uninstall_keeps_shared_rules(repo: Path) -> None:
    assert invoke("init", "--agents", "codex,vscode").exit_code == 0
    assert invoke("uninstall", "--agents", "codex").exit_code == 0
    assert not (repo / ".codex").exists()
    assert "ocm:begin" in (repo / "AGENTS.md").read_text()  # VS Code still uses it
    assert invoke("uninstall", "--agents", "vscode").exit_code == 0
    assert not (repo / "AGENTS.md").exists()


@pytest.mark.parametrize("bom", [False, True])
def test_crlf_and_bom_files_round_trip_byte_identical(repo: Path, bom: bool) -> None:
    prefix = "\ufeff" if bom else ""
    for rel, text in EXISTING.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((prefix + text.replace("\n", "\r\n")).encode("utf-8"))
    # A secret in one file: its original is never kept, so uninstall rebuilds it.
    secret = repo / ".gemini/settings.json"
    secret.write_bytes((prefix + json.dumps({"theme": "GitHub", "apiKey": "sk-ant-api03-" +
                                             "B" * 40}, indent=2).replace("\n", "\r\n")
                        + "\r\n").encode())
    before = snapshot(repo)
    assert invoke("init", "--agents", "all").exit_code == 0
    for rel in ("CLAUDE.md", "AGENTS.md", ".gemini/settings.json", ".mcp.json",
                ".codex/config.toml", ".vscode/mcp.json"):
        raw = (repo / rel).read_bytes()
        assert raw.startswith(b"\xef\xbb\xbf") == bom, rel
        assert b"\n" not in raw.replace(b"\r\n", b""), f"{rel} has a bare LF"
        assert raw.count(b"\xef\xbb\xbf") == int(bom), rel
    gemini = json.loads((repo / ".gemini/settings.json").read_bytes().decode("utf-8-sig"))
    assert "ocm" in gemini["mcpServers"]
    result = invoke("uninstall", "--yes")
    assert result.exit_code == 0, result.output
    assert snapshot(repo) == before
    assert "Kept your notes in" in result.output
    assert "Kept the .openCodeMemory/ line in" in result.output
