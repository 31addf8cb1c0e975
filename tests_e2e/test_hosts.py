"""What a real session of each host leaves behind, as issue #14 states it: a session note
with its files and prompts (without ocm's own brief), the failed command, a `bug_fix`
memory, the brief seen by the model, the MCP tool call's result, the session closed and the
transcript note. Each test reads the same run of its host (`run` fixture in conftest)."""

from __future__ import annotations

import json
import re

from ocm.agents.common import host_module
from ocm.vault.sessions import SessionNote
from tests_e2e.conftest import BRIEF_MARKER, HostRun
from tests_e2e.hosts import PROMPT
from tests_e2e.mock_model import COMMAND, DONE, FILE, NUDGE_DONE, REMEMBER, STEPS

BRIEF_WORDS = ("Project memory (ocm)", "Current ocm session id", "hook_context", BRIEF_MARKER)


def the_session(run: HostRun) -> SessionNote:
    notes = [n for n in run.session_notes() if n.fm.get("tool") == run.host.name]
    assert len(notes) == 1, (
        f"expected one {run.host.name} session note, found {len(notes)}\n{run.output()}")
    return notes[0]


def test_ocm_init_wires_the_host(run: HostRun) -> None:
    assert run.init.returncode == 0, run.init.stderr


def test_host_ran_the_whole_script(run: HostRun) -> None:
    steps = [r.step for r in run.scripted()]
    assert run.proc.returncode == 0, run.output()
    assert steps and max(steps) == len(STEPS) - 1, (
        f"the mock served steps {steps} of {len(STEPS)}\n{run.output()}")
    # A host that prints the last answer shows the one to ocm's end-of-turn nudge, if any.
    assert DONE in run.proc.stdout or (NUDGE_DONE in run.proc.stdout and any(
        r.nudge for r in run.requests)), run.output()


def test_session_note_lists_the_files(run: HostRun) -> None:
    note = the_session(run)
    assert note.files() == {FILE: "created"}, note.files()


def test_prompt_recorded_without_the_brief(run: HostRun) -> None:
    prompts = the_session(run).items("prompts")
    assert any(p.startswith(PROMPT) for p in prompts), prompts
    leaked = [p for p in prompts for w in BRIEF_WORDS if w in p]
    assert not leaked, f"ocm's own brief stored as a prompt: {leaked}"


def test_failed_command_recorded(run: HostRun) -> None:
    failed = the_session(run).items("failed commands")
    assert any(COMMAND in item for item in failed), (failed, run.output())


def test_bug_fix_memory(run: HostRun) -> None:
    fixes = run.ocm("memories", "--type", "bug_fix")
    assert len(fixes) == 1, (fixes, run.output())
    fix = run.ocm("get", fixes[0]["id"])
    assert COMMAND in fix["markdown"] and "NameError" in fix["markdown"], fix["markdown"]
    assert fix["frontmatter"]["files"] == [FILE], fix["frontmatter"]


def test_model_received_the_brief(run: HostRun) -> None:
    """The SessionStart brief reaches the model: the mock sees the pinned memory and the
    ocm session id in what the host sent."""
    note = the_session(run)
    assert [r for r in run.scripted() if BRIEF_MARKER in json.dumps(r.body)], (
        "the pinned memory never reached the model")
    assert [r for r in run.scripted() if note.id in json.dumps(r.body)], (
        f"the ocm session id {note.id} never reached the model")


def test_mcp_remember_result(run: HostRun) -> None:
    """The host ran `ocm__remember` through ocm's MCP server and handed its result back to
    the model; the memory is on disk, active, with its file."""
    last = [r for r in run.scripted() if r.step == len(STEPS) - 1]
    assert last, f"the model never got the tool result\n{run.output()}"
    body = json.dumps(last[-1].body).replace('\\"', '"')
    match = re.search(r'"id": ?"(e2e-src-greet-py-[a-z0-9-]+)"', body)
    assert match, f"no ocm__remember result in the last request: {body[-2000:]}"
    assert re.search(r'"kind": ?"memory"', body), body[-2000:]
    memory = run.ocm("get", match.group(1))
    fm = memory["frontmatter"]
    assert fm["status"] == "active" and fm["type"] == REMEMBER["type"], fm
    assert REMEMBER["content"] in memory["markdown"] and fm["files"] == [FILE], memory


def test_session_closed(run: HostRun) -> None:
    note = the_session(run)
    if getattr(host_module(run.host.name), "NO_SESSION_END", False):
        # `qwen -p` sends no SessionEnd: the session waits for the quiet-period close.
        quiet = json.loads((run.vault / ".hooks" / "quiet.json").read_text())
        assert note.status == "open" and note.id in json.dumps(quiet), (quiet, run.output())
        return
    assert note.status == "closed", (note.status, run.output())
    assert note.fm.get("git_sha_end") and note.fm.get("ended_at"), note.fm
    assert note.fm.get("trigger") != "context_limit", "no compaction happened"


def test_transcript_note(run: HostRun) -> None:
    notes = sorted((run.vault / "transcripts").glob("*.md"))
    assert notes, f"no transcript note under {run.vault / 'transcripts'}"
    text = "\n".join(p.read_text() for p in notes)
    # The user's words, the model's answer, and the tool calls with their outcomes.
    assert PROMPT in text and DONE in text, text[-2000:]
    assert re.search(rf"{re.escape(COMMAND)}.*NameError", text), text[-2000:]
    assert "ocm__remember" in text, text[-2000:]
