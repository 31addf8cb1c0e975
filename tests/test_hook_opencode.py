"""OpenCode: the plugin `ocm init --agents opencode` writes, loaded by Node the way OpenCode
loads it (every named export a plugin function) and driven with the hook inputs and event
shapes of the installed `@opencode-ai/plugin` 1.18.33 types, calling the real `ocm-hook`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.markdown import Document  # noqa: E402

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: the OpenCode "
                                                     "plugin cannot be loaded")

DRIVER = r"""
const [pluginPath, root] = process.argv.slice(2);
const mod = await import(pluginPath);
const plugins = Object.values(mod);
if (plugins.length !== 1 || typeof plugins[0] !== "function") throw new Error("exports");
const hooks = await plugins[0]({ directory: root, worktree: root });
const sid = "ses_4f1a";
const out = {};
const ev = (type, properties) => hooks.event({ event: { type, properties } });
const tool = (sessionID, name, args, output, exit) => hooks["tool.execute.after"](
  { tool: name, sessionID, callID: `call_${Math.random()}`, args },
  { title: name, output, metadata: exit === undefined ? {} : { output, exit } });

await ev("session.created", { info: { id: sid, projectID: "p", directory: root, title: "t",
                                      version: "1.18.33", time: { created: 1, updated: 1 } } });
const sys = { system: ["You are OpenCode."] };
await hooks["experimental.chat.system.transform"]({ sessionID: sid, model: {} }, sys);
out.system = sys.system;
await hooks["chat.message"]({ sessionID: sid }, { message: {}, parts: [
  { type: "text", text: "make the check pass" },
  { type: "text", text: "SYNTHETIC REMINDER", synthetic: true }] });
await tool(sid, "bash", { command: "python3 src/check.py", description: "run the check" },
  "python3: can't open file 'src/check.py': [Errno 2] No such file or directory\n", 2);
await tool(sid, "write", { filePath: `${root}/src/check.py`, content: "print('ok')\n" },
  "Wrote file successfully.");
await tool(sid, "read", { filePath: `${root}/old_parser.py` }, "x = 1");
await tool(sid, "bash", { command: "python3 src/check.py", description: "run the check" },
  "ok\n", 0);
await ev("session.created", { info: { id: "ses_child", parentID: sid, projectID: "p",
                                      directory: root, title: "sub", version: "1.18.33",
                                      time: { created: 2, updated: 2 } } });
await tool("ses_child", "write", { filePath: `${root}/from_subagent.py`, content: "" }, "ok");
await ev("session.compacted", { sessionID: sid });
await ev("session.idle", { sessionID: sid });
await hooks.dispose();
console.log(JSON.stringify(out));
"""


def drive(repo: Path, env: dict[str, str], tmp_path: Path) -> dict:
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    plugin = repo / ".opencode" / "plugins" / "ocm.js"
    out = subprocess.run([NODE, str(driver), plugin.as_uri(), str(repo)], capture_output=True,
                         text=True, env=env, cwd=repo, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_opencode_plugin_session(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    wired = h.ocm(["init", "--agents", "opencode"], env, repo)
    assert wired.returncode == 0, wired.stderr
    out = drive(repo, env, tmp_path)
    [session] = h.sessions(repo)
    note = Document.parse(session.read_text()).frontmatter
    assert note.get("tool") == "opencode"
    # The brief went into the system prompt, after OpenCode's own.
    assert out["system"][0] == "You are OpenCode."
    assert len(out["system"]) == 2 and f"Current ocm session id: {session.stem}" in out[
        "system"][1]
    text = session.read_text()
    assert "make the check pass" in text and "SYNTHETIC REMINDER" not in text
    assert "src/check.py" in text and "from_subagent.py" not in text  # subagents are skipped
    assert note.get("status") == "closed"               # dispose ended the session
    assert note.get("trigger") == "context_limit"       # session.compacted is a real one
    fixes = list((repo / ".openCodeMemory" / "memories" / "bug_fix").glob("*.md"))
    assert len(fixes) == 1
    memo = fixes[0].read_text()
    assert "python3 src/check.py" in memo and "No such file or directory" in memo


def test_opencode_without_vault_or_hook_is_harmless(tmp_path: Path, env: dict[str, str]) -> None:
    """The plugin never throws into OpenCode: no vault, or an ocm-hook that is gone."""
    root = h.make_repo(tmp_path / "bare")
    from ocm.agents import opencode
    from ocm.agents.base import InstallContext

    for hook_exe in (h.HOOK, str(tmp_path / "missing" / "ocm-hook")):
        ctx = InstallContext(root, False, hook_exe, h.OCM, tmp_path)
        plugin = root / ".opencode" / "plugins" / "ocm.js"
        plugin.parent.mkdir(parents=True, exist_ok=True)
        plugin.write_text(opencode.plugin_source(ctx))
        out = drive(root, env, tmp_path)
        assert out["system"] == ["You are OpenCode."]   # no brief, no error
    assert not (root / ".openCodeMemory").exists()      # nothing created without `ocm init`
