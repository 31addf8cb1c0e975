"""Issue #24: the next session's brief carries the last session's work, in any tool.

Sessions are replayed through `ocm-hook` (real processes) from the payloads the real Claude
Code 2.1.332 sent in a two-prompt session (tests/fixtures/capture/payloads/claude-code-
multiturn-a and -b, from shared/reference/hosts), and from the hosts' payload shapes in
tests/fixtures/hooks/; the brief read is what the next session's SessionStart prints."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.agents.common import error_line  # noqa: E402
from ocm.vault.handover import left_sentences, unresolved_failures  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402
from tests.conftest import git, ocm_in_process  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

RECORDED = Path(__file__).parent / "fixtures" / "capture" / "payloads"
TEST_CMD = "python3 -m unittest discover -s tests"
CHECKPOINT = {
    "goal": "Add a --name option to src/greet.py, with argparse, and unit tests for it",
    "work_completed": ["--name option in src/greet.py (argparse)"],
    "work_pending": ["split greet(name) -> str out of main() so the test passes"],
    "decisions": ["**argparse, not click:** the project stays dependency-free"],
}


def replay_recorded(folder: str, repo: Path, env: dict[str, str],
                    checkpoint: dict | None = None) -> str:
    """The recorded session, its Write calls made on disk as the real run did; the
    checkpoint (an MCP call no hook sees) made with `ocm checkpoint` before the last Stop."""
    sid = ""
    for path in sorted((RECORDED / folder).glob("*.json")):
        text = path.read_text()
        for old in ("/home/dev/rich-a/shop", "/home/dev/rich-b/shop"):
            text = text.replace(old, str(repo))
        data = json.loads(text)
        sid = data["session_id"]
        event = path.stem.split("-", 1)[1]
        if data.get("tool_name") == "Write":
            target = Path(data["tool_input"]["file_path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(data["tool_input"]["content"])
        if checkpoint and event == "stop" and "I stopped here" in data["last_assistant_message"]:
            out = _checkpoint(sid, checkpoint, env, repo)
            assert out.returncode == 0, out.stderr
        assert h.run_hook(["claude-code", event], json.dumps(data).encode(), env,
                          cwd=repo).returncode == 0
    return sid


def _checkpoint(sid: str, fields: dict, env: dict[str, str], repo: Path):
    """`ocm checkpoint` through its entry point in this process (conftest.ocm_in_process):
    its exit code and the session note it leaves are what counts."""
    return ocm_in_process(["checkpoint", "--session", sid, "--input", "-"], repo, env,
                          json.dumps(fields))


def start(host: str, repo: Path, env: dict[str, str], sid: str | None = None) -> str:
    """A new session of `host` starts; returns the brief it is given."""
    sid = sid or str(uuid.uuid4())
    name = "session-start"
    data = h.payload(host, name, repo, sid)
    out = h.run_hook([host, name], data, env, cwd=repo)
    assert out.returncode == 0, out.stderr
    if not out.stdout.strip():
        return ""
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]


def hook(host: str, name: str, repo: Path, env: dict[str, str], sid: str, **over) -> None:
    out = h.run_hook([host, _event(name)], h.payload(host, name, repo, sid, **over), env,
                     cwd=repo)
    assert out.returncode == 0, out.stderr


def _event(fixture: str) -> str:
    for event in ("post-tool-use-failure", "post-tool-use", "after-file-edit", "session-start",
                  "session-end", "user-prompt-submit", "before-submit-prompt", "stop",
                  "after-shell-execution"):
        if fixture.startswith(event):
            return event
    raise AssertionError(fixture)


def last_session(brief: str) -> str:
    """The brief's Last session block."""
    assert "## Last session" in brief, brief
    return brief.split("## Last session", 1)[1].split("\n## ", 1)[0]


def front(path: Path) -> dict:
    return Document.parse(path.read_text()).frontmatter.data


def of_tool(tool: str, repo: Path) -> Path:
    [note] = [p for p in h.sessions(repo) if front(p)["tool"] == tool]
    return note


# --------------------------------------------------------------------------- the brief


def test_recorded_session_hands_over_files_failure_and_what_is_left(
        repo: Path, env: dict[str, str]) -> None:
    """The issue's session (no checkpoint): the brief was its goal alone."""
    replay_recorded("claude-code-multiturn-a", repo, env)
    block = last_session(start("codex", repo, env))
    assert block.startswith(" (handed over from claude-code, closed, just now)")
    assert "Add a --name option to src/greet.py" in block
    assert "- file: created `tests/test_greet.py`" in block
    assert "- file: modified `src/greet.py`" in block
    assert (f"- failing: `{TEST_CMD}` fails: ImportError: cannot import name 'greet' from "
            "'src.greet'") in block
    assert ("- left: Still to do: split a `greet(name) -> str` out of `main()` so the test "
            "passes, then the README usage section. I stopped here.") in block
    assert "- done: Added tests/test_greet.py, but it fails" in block  # the last Work Done
    note = of_tool("claude-code", repo)
    assert f"- read more: ocm__get_note {note.stem}" in block
    assert all(len(line) <= 320 for line in block.splitlines())


def test_recorded_checkpoint_session_hands_over_pending_and_decisions(
        repo: Path, env: dict[str, str]) -> None:
    """With the agent's checkpoint: completed, pending and the session's decision (its
    Architecture Decisions section, not a decision record); and the turn after the
    checkpoint still lands in Work Done."""
    replay_recorded("claude-code-multiturn-b", repo, env, CHECKPOINT)
    [note] = h.sessions(repo)
    text = note.read_text()
    work_done = text.split("## Work Done", 1)[1].split("\n## ", 1)[0]
    assert "Added tests/test_greet.py, but it fails" in work_done
    block = last_session(start("gemini", repo, env))
    assert "Add a --name option to src/greet.py, with argparse, and unit tests" in block
    assert "- done: --name option in src/greet.py (argparse)" in block
    assert "- pending: split greet(name) -> str out of main() so the test passes" in block
    assert "- decision: **argparse, not click:** the project stays dependency-free" in block
    assert f"`{TEST_CMD}` fails: ImportError" in block
    assert "Still to do: split a" in block


def test_items_over_the_budget_are_counted(repo: Path, env: dict[str, str]) -> None:
    """80 files cannot fit a 2,000-character brief: the ones left out are counted, and the
    failure and the pending work still come first."""
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    project = Project.open(cwd=repo)
    sid = project.start_session("cursor", agent_session_id="conv-1").id
    for i in range(80):
        project.vault.record_file(sid, f"src/module_{i:02d}.py", "created")
    project.checkpoint(CheckpointInput(goal="Split the monolith", work_pending=["wire it"]),
                       session_id=sid)
    brief = project.recall(budget=2000)
    block = last_session(brief.text)
    shown = block.count("- file: created")
    assert 0 < shown < 80 and f"+{80 - shown} more files did not fit" in block
    assert "- pending: wire it" in block and len(brief.text) <= 2000
    assert brief.last_session is not None and len(brief.last_session["files"]) == 80


# --------------------------------------------------------------------------- which session


def test_cursor_pending_work_survives_an_empty_vscode_session(
        repo: Path, env: dict[str, str]) -> None:
    """The issue's story: Cursor saves pending work, VS Code starts and does nothing,
    Claude Code starts and is handed Cursor's session, not VS Code's empty note."""
    conv = "conv-7a1"
    hook("cursor", "session-start", repo, env, conv)
    hook("cursor", "before-submit-prompt", repo, env, conv)
    (repo / "store.py").write_text("class Store:\n    pass\n")
    hook("cursor", "after-file-edit-new", repo, env, conv)
    out = h.ocm_here(["checkpoint", "--session", conv, "--pending", "add jitter to the backoff"],
                env, repo)
    assert out.returncode == 0, out.stderr
    hook("cursor", "session-end", repo, env, conv)
    vscode = str(uuid.uuid4())
    assert "add jitter to the backoff" in start("vscode", repo, env, vscode)
    block = last_session(start("claude-code", repo, env))
    assert block.startswith(" (handed over from cursor, closed,")
    assert "- pending: add jitter to the backoff" in block
    assert "- file: created `store.py`" in block
    assert "vscode" not in block


def test_two_tools_open_at_once_see_each_others_work(repo: Path, env: dict[str, str]) -> None:
    claude = str(uuid.uuid4())
    start("claude-code", repo, env, claude)
    hook("claude-code", "user-prompt-submit", repo, env, claude)
    (repo / "src").mkdir(exist_ok=True)
    hook("claude-code", "post-tool-use-write", repo, env, claude)
    hook("claude-code", "stop", repo, env, claude,
         last_assistant_message="Wrote it. Next: wire the CLI flag.")
    codex = str(uuid.uuid4())
    block = last_session(start("codex", repo, env, codex))  # claude-code is still open
    assert block.startswith(" (handed over from claude-code, open,")
    assert "- left: Next: wire the CLI flag." in block
    hook("codex", "user-prompt-submit", repo, env, codex)
    hook("codex", "stop", repo, env, codex,
         last_assistant_message="Split the parser. Still to do: the grammar tests.")
    block = last_session(start("claude-code", repo, env))
    assert block.startswith(" (handed over from codex, open,")
    assert "Still to do: the grammar tests." in block


def test_empty_hook_sessions_are_removed_at_close(repo: Path, env: dict[str, str]) -> None:
    """A session a hook opened and nothing was recorded in leaves no note; one with a
    prompt stays."""
    empty, kept = str(uuid.uuid4()), str(uuid.uuid4())
    start("claude-code", repo, env, empty)
    assert len(h.sessions(repo)) == 1
    hook("claude-code", "session-end", repo, env, empty)
    assert h.sessions(repo) == []
    listed = h.ocm_here(["list", "--json"], env, repo)
    assert listed.returncode == 0 and empty not in listed.stdout
    start("claude-code", repo, env, kept)
    hook("claude-code", "user-prompt-submit", repo, env, kept)
    hook("claude-code", "session-end", repo, env, kept)
    [note] = h.sessions(repo)
    assert front(note)["agent_session_id"] == kept and front(note)["status"] == "closed"


def test_vscode_empty_session_is_removed_when_the_next_starts(
        repo: Path, env: dict[str, str]) -> None:
    """VS Code has no session end: its earlier open session is closed by the next start,
    and removed there when empty."""
    start("vscode", repo, env, "vs-1")
    start("vscode", repo, env, "vs-2")
    assert [front(p)["agent_session_id"] for p in h.sessions(repo)] == ["vs-2"]


def test_a_person_s_words_keep_an_otherwise_empty_note(repo: Path, env: dict[str, str]) -> None:
    sid = str(uuid.uuid4())
    start("claude-code", repo, env, sid)
    [note] = h.sessions(repo)
    note.write_text(note.read_text() + "\n## My notes\n\nlook at the cache first\n")
    hook("claude-code", "session-end", repo, env, sid)
    assert "look at the cache first" in note.read_text()


# --------------------------------------------------------------------------- failures


def test_a_failure_that_passed_later_is_not_handed_over(repo: Path, env: dict[str, str]) -> None:
    sid = str(uuid.uuid4())
    start("claude-code", repo, env, sid)
    hook("claude-code", "user-prompt-submit", repo, env, sid)
    hook("claude-code", "post-tool-use-failure-bash", repo, env, sid)
    failing = json.loads(h.payload("claude-code", "post-tool-use-failure-bash", repo, sid))
    hook("claude-code", "post-tool-use-bash", repo, env, sid,
         tool_input=failing["tool_input"])
    hook("claude-code", "session-end", repo, env, sid)
    block = last_session(start("codex", repo, env))
    assert "failing" not in block
    assert "`pytest -q tests/test_backoff.py` passed" in of_tool("claude-code", repo).read_text()


def test_a_failure_that_passed_then_failed_again_is_handed_over(
        repo: Path, env: dict[str, str]) -> None:
    """Failed, passed, failed again with the same error: the last word is the failure, both
    within one fold of the journal and across folds (a turn's end between the runs)."""
    failing = json.loads(h.payload("claude-code", "post-tool-use-failure-bash", repo, "x"))
    for folds in (False, True):
        sid = str(uuid.uuid4())
        start("claude-code", repo, env, sid)
        hook("claude-code", "user-prompt-submit", repo, env, sid)
        for name in ("post-tool-use-failure-bash", "post-tool-use-bash",
                     "post-tool-use-failure-bash", "post-tool-use-bash",
                     "post-tool-use-failure-bash"):
            hook("claude-code", name, repo, env, sid, tool_input=failing["tool_input"])
            if folds:
                hook("claude-code", "stop", repo, env, sid,
                     last_assistant_message=f"Ran the tests ({name}).")
        hook("claude-code", "session-end", repo, env, sid)
        [note] = [p for p in h.sessions(repo) if front(p).get("tool") == "claude-code"
                  and sid in p.read_text()]
        block = last_session(start("codex", repo, env))
        assert "`pytest -q tests/test_backoff.py` fails: E AssertionError" in block, (
            folds, block)
        section = note.read_text().split("## Failed Commands", 1)[1].split("\n## ", 1)[0]
        bullets = [ln for ln in section.splitlines() if ln.startswith("- ")]
        assert bullets[:2] == ["- `pytest -q tests/test_backoff.py` passed",
                               "- `pytest -q tests/test_backoff.py` failed: "
                               "`E AssertionError: assert 9 == 8`"], (folds, section)


def test_unresolved_failures_reads_the_failed_commands_section() -> None:
    items = ["`pytest -q` failed: `E   assert 1 == 2`", "`make` failed",
             "`pytest -q` passed after editing `a.py` (bug_fix memory m1)",
             "`make` passed", "`ruff check` failed: `F401 unused`", "``echo `x` `` failed"]
    assert unresolved_failures(items) == ["`ruff check` fails: F401 unused",
                                          "`echo `x`` fails"]


def test_error_line_of_the_recorded_unittest_failure() -> None:
    """unittest's `ERROR: test_x (…)` header names the test, not the error: the exception
    line is the one to hand over."""
    data = json.loads((RECORDED / "claude-code-multiturn-a" /
                       "09-post-tool-use-failure.json").read_text())
    assert error_line(data["error"]).startswith("ImportError: cannot import name 'greet'")


# --------------------------------------------------------------------------- last message


def test_left_sentences_of_the_recorded_messages() -> None:
    stops = {p.name: json.loads(p.read_text())["last_assistant_message"]
             for folder in ("claude-code-multiturn-a", "claude-code-multiturn-b")
             for p in sorted((RECORDED / folder).glob("*-stop.json"))}
    assert set(stops.values()) and all(left_sentences(m) for m in stops.values())
    assert left_sentences(stops["06-stop.json"]) == (
        "Next: unit tests for --name, and a usage section in README.md.")
    assert left_sentences(stops["10-stop.json"]) == (
        "Still to do: split a `greet(name) -> str` out of `main()` so the test passes, then "
        "the README usage section. I stopped here.")


def test_left_sentences_rules() -> None:
    assert left_sentences("Done.\n\nNext steps:\n- add jitter\n- a retry test\n\nBye.") == (
        "Next steps: add jitter; a retry test")
    assert left_sentences("Fixed the parser. The lexer still needs to handle tabs.") == (
        "The lexer still needs to handle tabs.")
    assert left_sentences("**TODO:** wire the flag.") == "**TODO:** wire the flag."
    for nothing in ("All tests pass. The feature is complete.", "", "Next to the cache, the "
                    "store is fine.", "I did it."):
        assert left_sentences(nothing) == "", nothing


# --------------------------------------------------------------------------- files


def test_cli_session_is_credited_only_with_its_own_changes(repo: Path,
                                                           env: dict[str, str]) -> None:
    """No hooks: a session saved through the CLI takes the same dirty-at-start snapshot as
    a hook-opened one, so what `ocm init` wrote and someone's uncommitted work are not its
    files, and the diff summary counts only its own change."""
    (repo / "README.md").write_text("# demo\nsomeone's uncommitted work\n")
    (repo / "notes.txt").write_text("scratch\n")
    out = h.ocm_here(["checkpoint", "--tool", "cursor", "--goal", "Add the app"], env, repo)
    assert out.returncode == 0, out.stderr
    (repo / "app.py").write_text("print('hi')\n")
    out = h.ocm_here(["checkpoint", "--tool", "cursor", "--status", "closed"], env, repo)
    assert out.returncode == 0, out.stderr
    [note] = h.sessions(repo)
    files = h.ocm_here(["files", note.stem, "--json"], env, repo)
    assert files.returncode == 0, files.stderr
    assert [f["path"] for f in json.loads(files.stdout)] == ["app.py"]
    assert "0 files changed, +0 / -0 lines; 1 new untracked." in note.read_text()


def test_team_vault_notes_are_never_credited(repo: Path, env: dict[str, str]) -> None:
    """In a team vault ocm's own notes are tracked by git: committed ones are not the
    session's files either."""
    assert h.ocm_here(["init", "--team"], env, repo).returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team vault")
    out = h.ocm_here(["checkpoint", "--tool", "cursor", "--goal", "Add the app"], env, repo)
    assert out.returncode == 0, out.stderr
    assert h.ocm_here(["remember", "The cache is per process", "--type", "gotcha"], env,
                 repo).returncode == 0
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work and notes")
    out = h.ocm_here(["checkpoint", "--tool", "cursor", "--status", "closed"], env, repo)
    assert out.returncode == 0, out.stderr
    [note] = h.sessions(repo)
    text = note.read_text()
    assert "`app.py`" in text and ".openCodeMemory" not in text.split("## Files Touched")[1]
    assert "1 file changed, +1 / -0 lines." in text


def test_windsurf_cascade_response_is_the_turn_s_last_message(
        repo: Path, env: dict[str, str]) -> None:
    """Cascade's `post_cascade_response` carries its reply: what it says is left reaches
    the next session."""
    def cascade(action: str, **info: str) -> bytes:
        return json.dumps({"agent_action_name": action, "trajectory_id": "traj-1",
                           "execution_id": f"exec-{action}", "tool_info": info}).encode()

    for action, info in (("pre_user_prompt", {"user_prompt": "Add a retry to the export"}),
                         ("post_cascade_response",
                          {"response": "Added the retry. Next: a jitter test."})):
        assert h.run_hook(["windsurf", action], cascade(action, **info), env,
                          cwd=repo).returncode == 0
    block = last_session(start("claude-code", repo, env))
    assert block.startswith(" (handed over from windsurf, open,")
    assert "- left: Next: a jitter test." in block and "- done: Added the retry." in block


def test_the_transcript_anchor_is_handed_over(repo: Path, env: dict[str, str]) -> None:
    """A session whose transcript was folded: the brief says where to read the
    conversation, at its last turn."""
    transcript = (Path(__file__).parent / "fixtures" / "capture" / "transcripts" /
                  "claude-code" / "8dd515cb-48af-4af7-ad88-d6e4db65c3fe.jsonl")
    for path in sorted((RECORDED / "claude-code").glob("*.json")):
        data = json.loads(path.read_text().replace("/home/dev/shop", str(repo)))
        data["transcript_path"] = str(transcript)
        assert h.run_hook(["claude-code", path.stem.split("-", 1)[1]],
                          json.dumps(data).encode(), env, cwd=repo).returncode == 0
    note = of_tool("claude-code", repo)
    block = last_session(start("codex", repo, env))
    assert (f"; the conversation: ocm__get_note {note.stem}_transcript (#Turn 1)") in block


# --------------------------------------------------------------------------- more hosts

COPILOT_EVENTS = {"sessionStart": "session-start", "userPromptSubmitted": "user-prompt-submitted",
                  "postToolUse": "post-tool-use", "agentStop": "stop",
                  "sessionEnd": "session-end"}  # what `ocm init --agents copilot` wires


def test_a_recorded_copilot_session_is_handed_over(repo: Path, env: dict[str, str],
                                                   tmp_path: Path) -> None:
    """The recorded Copilot CLI 1.0.102 session (create src/greet.py, its run fails, an edit,
    it passes; the final message only in events.jsonl, which `agentStop` names) replayed
    through its wired events: the next Claude Code session is told of it."""
    home = tmp_path / "copilot-home"

    def moved(text: str) -> str:
        return text.replace("/home/dev/probes/copilot-native/shop", str(repo)).replace(
            "/home/dev/probes/copilot-native/home", str(home))

    transcript = RECORDED.parent / "transcripts" / "copilot" / "events.jsonl"
    sid = ""
    for path in sorted((RECORDED / "copilot").glob("*.json")):
        event = COPILOT_EVENTS.get(path.stem.split("-", 1)[1])
        data = json.loads(moved(path.read_text()))
        sid = data["sessionId"]
        if event is None:
            continue  # preToolUse, permissionRequest: not wired
        if data.get("toolName") == "create":
            Path(data["toolArgs"]["path"]).parent.mkdir(parents=True, exist_ok=True)
            Path(data["toolArgs"]["path"]).write_text(data["toolArgs"]["file_text"])
        if data.get("toolName") == "edit":
            Path(data["toolArgs"]["path"]).write_text(data["toolArgs"]["new_str"])
        if event == "stop":
            target = Path(data["transcriptPath"])
            target.parent.mkdir(parents=True)
            target.write_text(moved(transcript.read_text()))
        out = h.run_hook(["copilot", event], json.dumps(data).encode(), env, cwd=repo)
        assert out.returncode == 0, out.stderr
    assert sid
    block = last_session(start("claude-code", repo, env))
    assert "(handed over from copilot, closed" in block
    assert "E2E task: create src/greet.py, run it, fix it, remember the gotcha" in block
    assert "- file: created `src/greet.py`" in block
    assert "Done (mock)." in block            # the final message, read from the transcript
    assert "failing" not in block             # failed, then passed after the edit
    assert "_copilot_transcript" in block     # how to read the conversation
