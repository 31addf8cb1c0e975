"""OpenCode: the plugin `ocm init --agents opencode` writes, loaded by Node the way OpenCode
loads it (every named export a plugin function) and driven with the hook inputs and event
shapes of the installed `@opencode-ai/plugin` 1.18.33 types, calling the real `ocm-hook`."""

from __future__ import annotations

import json
import shutil
import sqlite3
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


def drive(repo: Path, env: dict[str, str], tmp_path: Path, folder: str = ".opencode") -> dict:
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    plugin = repo / folder / "plugins" / "ocm.js"
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


# ---------------------------------------------------------------- transcript (opencode.db)

RECORDED_DB = Path(__file__).parent / "fixtures" / "hooks" / "opencode" / "session-db.json"
SID = "ses_e2e0000000000000000000001"
PROMPT = "E2E task: create src/greet.py, run it, fix it, remember the gotcha"


def recorded_db(path: Path, root: Path, sid: str = SID) -> sqlite3.Connection:
    """OpenCode's own tables with the rows a real `opencode run` left (make e2e)."""
    data = json.loads(RECORDED_DB.read_text().replace("{{ROOT}}", str(root))
                      .replace("{{SID}}", sid))
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")  # as OpenCode opens it
    for statement in data["schema"]:
        db.execute(statement)
    for table, rows in data["rows"].items():
        for row in rows:
            db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES "
                       f"({', '.join('?' * len(row))})", list(row.values()))
    return db


def oc_hook(event: str, root: Path, env: dict[str, str], sid: str = SID) -> None:
    out = h.run_hook(["opencode", event], json.dumps(
        {"hook_event_name": event, "cwd": str(root), "session_id": sid}).encode(), env, root)
    assert out.returncode == 0 and not out.stderr, out.stderr


def transcript_text(root: Path) -> str:
    notes = sorted((root / ".openCodeMemory" / "transcripts").glob("*.md"))
    assert len(notes) == 1, notes
    return notes[0].read_text()


@pytest.fixture
def oc_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**env, "XDG_DATA_HOME": str(tmp_path / "data")}


def test_opencode_transcript_from_its_database(repo: Path, oc_env: dict[str, str],
                                               tmp_path: Path) -> None:
    db = recorded_db(tmp_path / "data" / "opencode" / "opencode.db", repo)
    oc_hook("session.created", repo, oc_env)
    oc_hook("session.idle", repo, oc_env)
    text = transcript_text(repo)
    assert f"**User:** {PROMPT}\n" in text and "**Assistant:** Done (mock)." in text
    assert "`bash` `python3 src/greet.py` → exit 1: NameError: name 'GREETING'" in text
    assert "`bash` `python3 src/greet.py` → ok" in text and "`ocm_ocm__remember`" in text
    assert "print(GREETING)" not in text  # file contents and tool output are never kept
    [session] = h.sessions(repo)
    assert "transcript:" in session.read_text()
    # A second idle with nothing new adds nothing.
    oc_hook("session.idle", repo, oc_env)
    assert transcript_text(repo) == text
    # The next turn: its prompt, and an answer still being written (not read until done).
    db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (
        "msg_ffff00000001", SID, 1795474400000, 1795474400000,
        json.dumps({"role": "user", "time": {"created": 1795474400000}})))
    db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (
        "prt_ffff00000001", "msg_ffff00000001", SID, 1795474400001, 1795474400001,
        json.dumps({"type": "text", "text": "now add a test"})))
    db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (
        "msg_ffff00000002", SID, 1795474400100, 1795474400100,
        json.dumps({"role": "assistant", "time": {"created": 1795474400100}})))
    db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (
        "prt_ffff00000002", "msg_ffff00000002", SID, 1795474400200, 1795474400200,
        json.dumps({"type": "text", "text": "Added tests/test_greet.py."})))
    oc_hook("session.idle", repo, oc_env)
    text = transcript_text(repo)
    assert text.count("**User:**") == 2 and "now add a test" in text
    assert "Added tests/test_greet.py." not in text
    db.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(
        {"role": "assistant", "time": {"created": 1795474400100, "completed": 1795474400300}}),
        "msg_ffff00000002"))
    oc_hook("session.idle", repo, oc_env)
    text = transcript_text(repo)
    assert text.count("Added tests/test_greet.py.") == 1 and text.count("**User:**") == 2
    assert text.count("→ exit 1: NameError") == 1  # nothing folded twice


def test_opencode_transcript_is_redacted_before_it_is_written(
        repo: Path, oc_env: dict[str, str], tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5" * 4
    db = recorded_db(tmp_path / "data" / "opencode" / "opencode.db", repo)
    [(part_id, data)] = db.execute(
        "SELECT id, data FROM part WHERE data LIKE '%E2E task%'").fetchall()
    db.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(
        {"type": "text", "text": f"deploy with GITHUB_TOKEN={token}"}), part_id))
    oc_hook("session.created", repo, oc_env)
    oc_hook("session.idle", repo, oc_env)
    assert "deploy with GITHUB_TOKEN=[REDACTED:" in transcript_text(repo)
    vault = repo / ".openCodeMemory"
    leaks = [p for p in vault.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    assert not leaks, leaks


def test_opencode_transcript_failures_are_logged_not_raised(
        repo: Path, oc_env: dict[str, str], tmp_path: Path) -> None:
    log = repo / ".openCodeMemory" / ".hooks" / "hook.log"
    # No database where OpenCode keeps it: the session still works, no transcript.
    oc_hook("session.created", repo, oc_env)
    oc_hook("session.idle", repo, oc_env)
    assert "no session database at" in log.read_text()
    assert not list((repo / ".openCodeMemory" / "transcripts").glob("*.md"))
    # A database of another shape (no `part` table): logged, the session still closes.
    (tmp_path / "data" / "opencode").mkdir(parents=True)
    db = sqlite3.connect(tmp_path / "data" / "opencode" / "other.db")
    db.execute("CREATE TABLE message (id text, session_id text, time_created integer, "
               "data text)")
    db.execute("INSERT INTO message VALUES ('m1', ?, 1, '{\"role\": \"user\"}')", (SID,))
    db.commit()
    oc_hook("session.idle", repo, {**oc_env, "OPENCODE_DB": "other.db"})
    assert "transcript not updated" in log.read_text() and "no such table" in log.read_text()
    oc_hook("session.end", repo, {**oc_env, "OPENCODE_DB": "other.db"})
    # The session still closed: nothing was recorded in it, so its note is removed (#24).
    assert h.sessions(repo) == [] and "Traceback" not in log.read_text()


def test_opencode_transcripts_off_reads_nothing(repo: Path, oc_env: dict[str, str],
                                               tmp_path: Path) -> None:
    recorded_db(tmp_path / "data" / "opencode" / "opencode.db", repo)
    off = {**oc_env, "OCM_TRANSCRIPTS": "0"}
    oc_hook("session.created", repo, off)
    oc_hook("session.idle", repo, off)
    assert not (repo / ".openCodeMemory" / ".hooks" / "opencode").exists()
    assert not list((repo / ".openCodeMemory" / "transcripts").glob("*.md"))


def test_opencode_database_location(tmp_path: Path) -> None:
    from ocm.agents.opencode import database

    data = tmp_path / "share"
    env = {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}
    assert database(env) == str(data / "opencode" / "opencode.db")
    assert database({"HOME": str(tmp_path)}) == str(
        tmp_path / ".local" / "share" / "opencode" / "opencode.db")
    assert database({**env, "OPENCODE_DB": "x.db"}) == str(data / "opencode" / "x.db")
    assert database({**env, "OPENCODE_DB": "/abs/y.db"}) == "/abs/y.db"
    (data / "opencode").mkdir(parents=True)
    (data / "opencode" / "opencode-dev.db").write_bytes(b"")
    assert database(env) == str(data / "opencode" / "opencode-dev.db")  # a channel's own


def _oc_payload(event: str, root: Path, env: dict[str, str], **data: object) -> str:
    out = h.run_hook(["opencode", event], json.dumps(
        {"hook_event_name": event, "cwd": str(root), "session_id": SID, **data}).encode(),
        env, root)
    assert out.returncode == 0 and not out.stderr, out.stderr
    return out.stdout


def test_an_opencode_session_is_handed_over(repo: Path, oc_env: dict[str, str],
                                            tmp_path: Path) -> None:
    """A scripted OpenCode turn (a test file written, its run fails and is left failing; the
    final message, which no payload carries, only in opencode.db): the next Claude Code
    session is told of it (#24)."""
    db = recorded_db(tmp_path / "data" / "opencode" / "opencode.db", repo)
    db.execute("DELETE FROM part")
    db.execute("DELETE FROM message")
    prompt, cmd = "Add unit tests for greet", "python3 -m unittest discover -s tests"
    error = "ImportError: cannot import name 'greet' from 'src.greet'"
    rows = [("user", {"type": "text", "text": prompt}),
            ("assistant", {"type": "tool", "tool": "write", "callID": "c1", "state": {
                "status": "completed", "input": {"filePath": f"{repo}/tests/test_greet.py"},
                "output": "Wrote file successfully.", "metadata": {}}}),
            ("assistant", {"type": "tool", "tool": "bash", "callID": "c2", "state": {
                "status": "completed", "input": {"command": cmd}, "output": error,
                "metadata": {"exit": 1}}}),
            ("assistant", {"type": "text", "text": "Added the test; it fails. Still to do: "
                                                   "split greet() out of main()."})]
    for n, (role, part) in enumerate(rows):
        stamp = 1795474400000 + 10 * n
        db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (f"msg_{n}", SID, stamp, stamp,
                   json.dumps({"role": role, "time": {"created": stamp, "completed": stamp}})))
        db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                   (f"prt_{n}", f"msg_{n}", SID, stamp, stamp, json.dumps(part)))
    (repo / "tests").mkdir()
    (repo / "tests" / "test_greet.py").write_text("from src.greet import greet\n")
    _oc_payload("session.created", repo, oc_env, source="startup")
    _oc_payload("chat.message", repo, oc_env, prompt=prompt)
    _oc_payload("tool.execute.after", repo, oc_env, tool_name="write", tool_use_id="c1",
                tool_input={"filePath": f"{repo}/tests/test_greet.py", "content": "x"},
                tool_response={"output": "Wrote file successfully."})
    _oc_payload("tool.execute.after", repo, oc_env, tool_name="bash", tool_use_id="c2",
                tool_input={"command": cmd}, tool_response={"output": error, "exit_code": 1})
    _oc_payload("session.idle", repo, oc_env)
    _oc_payload("session.end", repo, oc_env, reason="exit")
    out = h.run_hook(["claude-code", "session-start"], h.payload(
        "claude-code", "session-start", repo, "next-session"), oc_env, repo)
    brief = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    block = brief.split("## Last session", 1)[1].split("\n## ", 1)[0]
    assert "(handed over from opencode, closed" in block and prompt in block
    assert "- file: created `tests/test_greet.py`" in block
    assert f"- failing: `{cmd}` fails: {error}" in block
    assert "- left: Still to do: split greet() out of main()." in block  # from opencode.db
