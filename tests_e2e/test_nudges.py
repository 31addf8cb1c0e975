"""Issue #25, with the real programs: the scripted session ends without an agent checkpoint
(it wrote, failed, fixed and remembered, then said done), so ocm's Stop-type hook nudges
the model once; the mock model answers as a model that follows instructions would
(`nudge_answer`: ocm__checkpoint with the session id the nudge named, ocm__remember, a
closing word). Each test reads the same run of its host (`run` fixture in conftest)."""

from __future__ import annotations

import json
import re

import pytest

from ocm.agents.common import host_module
from ocm.agents.nudge.message import BUDGET, MARKER
from tests_e2e.conftest import HostRun, host_session
from tests_e2e.hosts import HOSTS, Host
from tests_e2e.mock_model import (
    FILE,
    NUDGE_DECISION,
    NUDGE_DONE,
    NUDGE_GOAL,
    NUDGE_PENDING,
    NUDGE_REMEMBER,
    STEPS,
    MockModel,
)
from tests_e2e.test_hosts import the_session

# Where each host's program takes a hook's "go on with this instruction". OpenCode's plugin
# could prompt the session on `session.idle`, but `opencode run` ends at that event: tried
# with 1.18.33, the prompt never reached the model, so ocm does not nudge OpenCode.
EVENT = {"claude-code": "Stop", "codex": "Stop", "gemini": "AfterAgent", "qwen": "Stop",
         "droid": "Stop"}


def chosen_host(name: str) -> Host:
    """The host at the chosen version (`make e2e HOSTS=...`); skip when it is not chosen."""
    if name not in HOSTS:
        pytest.skip(f"{name} not chosen for this e2e run")
    return HOSTS[name]


def nudged_host(run: HostRun) -> None:
    if run.host.name not in EVENT:
        pytest.skip(f"{run.host.name}: not nudged (test_one_nudge_reached_the_model)")


def nudges_logged(run: HostRun) -> list[int]:
    """The characters of each nudge the hooks sent (hook.log: `nudged (N chars)`)."""
    log = run.vault / ".hooks" / "hook.log"
    text = log.read_text() if log.exists() else ""
    return [int(n) for n in re.findall(r"nudged \((\d+) chars\)", text)]


def test_one_nudge_reached_the_model(run: HostRun) -> None:
    sent = nudges_logged(run)
    if run.host.name not in EVENT:
        assert sent == [] and not [r for r in run.requests if r.nudge], run.output()
        pytest.skip(f"{run.host.name}: no way for a hook to continue the turn (README)")
    assert len(sent) == 1, f"nudges sent: {sent}\n{run.output()}"
    assert 0 < sent[0] <= BUDGET
    first = next((i for i, r in enumerate(run.requests) if r.nudge), None)
    assert first is not None, f"the nudge never reached the model\n{run.output()}"
    # It names what happened and the session, so the model needs no search.
    body = json.dumps(run.requests[first].body)
    note = the_session(run)
    assert FILE in body[body.find(MARKER):] and note.id in body[body.find(MARKER):]


def test_the_model_answer_cost_and_no_repeat(run: HostRun) -> None:
    """The nudge's cost: exactly the requests of the answer (one per tool call, one
    closing word); the last request holds the nudge once (never repeated)."""
    nudged_host(run)
    answers = [r.nudge for r in run.requests if r.nudge]
    assert answers == ["checkpoint", "remember", "text"], (answers, run.output())
    last = [r for r in run.requests if r.nudge][-1]
    # One message carries it: Claude Code 2.1.332 quotes a Stop hook's reason twice inside
    # that one message ("Stop hook blocking error from command: …" and "Stop hook
    # feedback: …"); a repeated nudge would come as a message of its own. The messages are
    # `messages` (Anthropic, chat completions), `input` (OpenAI Responses: Codex) or
    # `contents` (Gemini).
    messages = next((last.body[key] for key in ("messages", "input", "contents")
                     if isinstance(last.body.get(key), list)), [])
    assert messages and sum(MARKER in json.dumps(m) for m in messages) == 1
    assert NUDGE_DONE in json.dumps(run.requests[-1].body) or run.requests[-1].nudge == "text"


def test_session_note_carries_the_agent_checkpoint(run: HostRun) -> None:
    nudged_host(run)
    note = the_session(run)
    assert note.goal == NUDGE_GOAL, (note.goal, run.output())
    assert NUDGE_DECISION in note.text("architecture decisions")
    assert note.items("work to be completed") == [NUDGE_PENDING]
    # `qwen -p` sends no SessionEnd: its session waits for the quiet-period close.
    assert note.status == "closed" or host_module(run.host.name).NO_SESSION_END
    assert not [p for p in note.items("prompts") if MARKER in p], "the nudge stored as a prompt"


def test_the_remembered_convention(run: HostRun) -> None:
    nudged_host(run)
    found = run.ocm("memories", "--type", "convention")
    assert len(found) == 1, (found, run.output())
    memory = run.ocm("get", found[0]["id"])
    assert NUDGE_REMEMBER["content"] in memory["markdown"]
    assert memory["frontmatter"]["status"] == "active"


# --- the nudges at other moments (issue #25): their own sessions, not the shared `run` ----

COMMIT = "git add -A && git commit -q -m 'greet prints hello'"


@pytest.fixture(scope="module")
def codex_commit(mock: MockModel, tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """Codex with `nudges: all`: the scripted session, then a `git commit` before its last
    word. Its PreToolUse hook should put the checkpoint request before the commit."""
    steps = [*STEPS[:-1], ("shell", COMMIT), STEPS[-1]]
    return host_session(chosen_host("codex"), mock, tmp_path_factory, steps=steps,
                        extra_env={"OCM_NUDGES": "all"})


def test_codex_pre_tool_use_before_a_commit(codex_commit: HostRun) -> None:
    run = codex_commit
    log = (run.vault / ".hooks" / "hook.log").read_text()
    assert "nudged before a commit" in log, run.output()
    commit_at = next(i for i, r in enumerate(run.requests)
                     if "git commit" in json.dumps(r.body))
    seen = [i for i, r in enumerate(run.requests) if "about to commit" in json.dumps(r.body)]
    assert seen and seen[0] > commit_at, run.output()  # the context came with the call
    assert [r.nudge for r in run.requests if r.nudge] == ["checkpoint", "remember", "text"]
    note = the_session(run)
    assert note.goal == NUDGE_GOAL, run.output()
    assert nudges_logged(run) == []  # saved: no end-of-turn nudge after it


@pytest.fixture(scope="module")
def copilot_count(mock: MockModel, tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """Copilot CLI (its Stop cannot speak) at the default `nudges: end` with the fallback
    after 2 edits: the scripted session (2 edits), then `--continue` with a new prompt."""
    return host_session(chosen_host("copilot"), mock, tmp_path_factory,
                        extra_env={"OCM_NUDGE_EDITS": "2"},
                        follow_up=["--continue", "-p", "E2E: anything else?",
                                   "--allow-all-tools"])


def test_copilot_count_fallback_at_the_next_prompt(copilot_count: HostRun) -> None:
    run = copilot_count
    log = (run.vault / ".hooks" / "hook.log").read_text()
    assert log.count("nudged after 2 edits") == 1, run.output()
    asked = [r for r in run.requests if "You made 2 edits" in json.dumps(r.body)]
    assert asked, run.output()
    body = json.dumps(asked[0].body)
    assert FILE in body[body.find(MARKER):], body[body.find(MARKER):][:600]
    assert [r.nudge for r in run.requests if r.nudge] == ["checkpoint", "remember", "text"]
    saved = [n for n in run.session_notes() if n.goal == NUDGE_GOAL]
    assert len(saved) == 1 and saved[0].id in body, run.output()
