"""Done means: in a fresh repo, `ocm init --agents all`, then a scripted Claude Code session
through the installed hook commands (start -> prompt -> edits -> compact -> end) leaves a
complete, searchable session note, and the next session start injects the right brief.
Also: the journal stays consistent under concurrent hooks and concurrent folds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402

from ocm.vault.markdown import Document  # noqa: E402
from ocm.vault.sessions import SessionNote  # noqa: E402


def installed_commands(repo: Path) -> dict[str, str]:
    """Claude Code event -> the command line `ocm init` wrote into .claude/settings.json."""
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    return {event: groups[0]["hooks"][0]["command"]
            for event, groups in settings["hooks"].items()}


def test_done_means(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home", HOME=str(tmp_path / "home"))
    repo = h.make_repo(tmp_path / "proj")
    init = h.ocm(["init", "--agents", "all"], env, repo)
    assert init.returncode == 0, init.stderr
    assert "claude-code" in init.stdout and "/hooks" in init.stdout  # the to-do column
    commands = installed_commands(repo)
    sid = "e2e-claude-session-0001"

    def fire(event: str, fixture: str, session: str = sid, **override) -> bytes:
        out = h.run_hook([], h.payload("claude-code", fixture, repo, session, **override), env,
                         cwd=repo, command=commands[event])
        assert out.returncode == 0, out.stderr
        return out.stdout

    start = json.loads(fire("SessionStart", "session-start"))
    assert "Current ocm session id" in start["hookSpecificOutput"]["additionalContext"]
    assert fire("UserPromptSubmit", "user-prompt-submit") == b""
    (repo / "src").mkdir()
    (repo / "src" / "backoff.py").write_text("def backoff(n):\n    return 2 ** n\n")
    fire("PostToolUse", "post-tool-use-write")
    (repo / "README.md").write_text("# demo client\n")
    fire("PostToolUse", "post-tool-use-edit")
    fire("PostToolUse", "post-tool-use-read")
    # The agent checkpoints through the CLI/MCP facade as the rules tell it to.
    [note_path] = h.sessions(repo)
    checkpoint = h.ocm(["checkpoint", "--session", sid, "--goal",
                        "Add exponential backoff to the embedding client retries.",
                        "--done", "Wrote src/backoff.py", "--pending",
                        "Wire backoff into the HTTP client", "--slug", "embedding-backoff"],
                       env, repo)
    assert checkpoint.returncode == 0, checkpoint.stderr
    assert fire("PreCompact", "pre-compact") == b""
    compact = json.loads(fire("SessionStart", "session-start-compact"))
    assert "compacted" in compact["hookSpecificOutput"]["additionalContext"]
    assert fire("Stop", "stop") == b""
    assert fire("SessionEnd", "session-end") == b""

    [note_path] = h.sessions(repo)
    note = SessionNote(Document.parse(note_path.read_text()))
    assert note.status == "closed" and note.fm["agent_session_id"] == sid
    assert note.fm["trigger"] == "context_limit" and note.fm["git_sha_start"]
    assert note.fm["git_sha_end"] and note.fm["ended_at"]
    assert note.files() == {"src/backoff.py": "created", "README.md": "modified"}
    assert note.items("prompts") == ["Add exponential backoff to the embedding client retries"]
    assert note.goal.startswith("Add exponential backoff")
    assert note.diff_summary().startswith("1 file changed, +1 / -1 lines")

    found = json.loads(h.ocm(["search", "embedding backoff", "--json"], env, repo).stdout)
    assert found and found[0]["id"] == note.id and found[0]["markdown_path"] == str(note_path)
    assert json.loads(h.ocm(["search", "backoff.py", "--json"], env, repo).stdout)[0][
        "id"] == note.id

    remembered = h.ocm(["remember", "The embedding API returns 429 under burst load; retry "
                        "with jitter.", "--type", "gotcha", "--title",
                        "Embedding API rate-limits bursts"], env, repo)
    assert remembered.returncode == 0, remembered.stderr
    nxt = json.loads(fire("SessionStart", "session-start", session="e2e-claude-session-0002"))
    brief = nxt["hookSpecificOutput"]["additionalContext"]
    assert "## Last session" in brief and note.id in brief
    assert "Add exponential backoff to the embedding client retries." in brief
    assert "pending: Wire backoff into the HTTP client" in brief
    assert "## Gotchas" in brief and "Embedding API rate-limits bursts" in brief
    [new_id] = [p.stem for p in h.sessions(repo)
                if "e2e-claude-session-0002" in p.read_text()]
    assert f"Current ocm session id: {new_id}" in brief and len(brief) <= 10_000


def test_concurrent_hooks_and_folds_lose_nothing(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home")
    repo = h.make_repo(tmp_path / "proj")
    h.init_vault(repo, env)
    sid = "concurrent-1"
    h.run_hook(["claude-code", "session-start"],
               h.payload("claude-code", "session-start", repo, sid), env, cwd=repo)
    procs = []
    for i in range(24):
        data = h.payload("claude-code", "post-tool-use-edit", repo, sid,
                         tool_input={"file_path": str(repo / f"pkg/mod_{i}.py")})
        procs.append(subprocess.Popen([h.HOOK, "claude-code", "post-tool-use"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      env=env, cwd=repo))
        procs[-1].stdin.write(data)
        procs[-1].stdin.close()
        if i % 8 == 0:  # folds racing with appends
            procs.append(subprocess.Popen([h.OCM, "status"], stdout=subprocess.DEVNULL,
                                          env=env, cwd=repo))
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    assert h.ocm(["status"], env, repo).returncode == 0
    [path] = h.sessions(repo)
    files = SessionNote(Document.parse(path.read_text())).files()
    assert files == {f"pkg/mod_{i}.py": "modified" for i in range(24)}
