"""Google Antigravity (issue #27): what `ocm init --agents antigravity` writes from the
third-party descriptions of its customisation root (README, "Google Antigravity"): the MCP
server, an always-on rule and the checkpoint skill; no hooks. Round trips, an existing
config kept, the user scope, doctor."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ocm.cli.main import cli

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402

SKILL = ".agents/skills/ocm-checkpoint/SKILL.md"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = h.make_repo(tmp_path / "proj")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":/usr/bin:/bin")
    monkeypatch.chdir(root)
    return root


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def frontmatter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_project_wiring_round_trip(repo: Path) -> None:
    config = repo / ".agents" / "mcp_config.json"
    config.parent.mkdir()
    mine = '{\n    "mcpServers": {\n        "docs": {"command": "docs-mcp"}\n    }\n}\n'
    config.write_text(mine)
    invoke("init", "--agents", "antigravity")
    servers = json.loads(config.read_text())["mcpServers"]
    assert set(servers) == {"docs", "ocm"}
    assert servers["ocm"]["command"] == "ocm" and servers["ocm"]["args"] == ["mcp"]
    assert "type" not in servers["ocm"]
    skill = (repo / SKILL).read_text()
    meta = frontmatter(skill)
    assert meta["name"] == "ocm-checkpoint"  # the folder's name, as skills require
    assert "ocm__checkpoint" in meta["description"] and "git commit" in meta["description"]
    assert "ocm__checkpoint" in skill and "ocm__recall" in skill and "session_id" in skill
    rule = (repo / ".agents" / "rules" / "ocm.md").read_text()
    assert frontmatter(rule) == {"trigger": "always_on"} and "ocm__remember" in rule
    assert not (repo / ".agents" / "hooks.json").exists()  # no hooks are wired
    again = invoke("init", "--agents", "antigravity", "--json")
    assert {f["action"] for a in json.loads(again)["agents"] for f in a["files"]} == {
        "unchanged"}
    invoke("uninstall", "--agents", "antigravity")
    assert config.read_text() == mine
    assert sorted(p.relative_to(repo).as_posix() for p in (repo / ".agents").rglob("*")) == [
        ".agents/mcp_config.json"]


def test_someone_elses_skill_is_never_overwritten(repo: Path) -> None:
    theirs = repo / SKILL
    theirs.parent.mkdir(parents=True)
    theirs.write_text("---\nname: ocm-checkpoint\ndescription: mine\n---\n")
    out = json.loads(invoke("init", "--agents", "antigravity", "--json"))
    [skill] = [f for f in out["agents"][0]["files"] if f["path"].endswith("SKILL.md")]
    assert skill["action"] == "skipped" and "not ocm's" in skill["detail"]
    invoke("uninstall", "--agents", "antigravity")
    assert theirs.read_text().endswith("description: mine\n---\n")


def test_user_scope(repo: Path, tmp_path: Path) -> None:
    out = invoke("init", "--agents", "antigravity", "--user")
    base = tmp_path / "home" / ".gemini" / "antigravity"
    assert json.loads((base / "mcp_config.json").read_text())["mcpServers"]["ocm"]["env"] == {}
    assert (base / "skills" / "ocm-checkpoint" / "SKILL.md").is_file()
    assert "GEMINI.md" in out  # the global rule is left to the person
    invoke("uninstall", "--agents", "antigravity", "--user")
    assert not (base / "skills").exists() and not (base / "mcp_config.json").exists()


def test_doctor_does_not_wait_for_hooks(repo: Path) -> None:
    invoke("init", "--agents", "antigravity")
    checks = {c["what"]: c for c in json.loads(invoke("doctor", "--json"))}
    assert checks["antigravity (project)"]["status"] == "ok"
    assert "antigravity hooks" not in checks  # it has none, so none can be silent
    (repo / SKILL).write_text("---\nname: ocm-checkpoint\n---\nocm-managed, edited\n")
    checks = {c["what"]: c for c in json.loads(
        CliRunner().invoke(cli, ["doctor", "--json"]).output)}
    assert checks["antigravity (project)"]["status"] == "warn"
    assert "SKILL.md: out of date" in checks["antigravity (project)"]["detail"]
