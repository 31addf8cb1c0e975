"""Issue #25: end-of-turn nudges. The real Claude Code 2.1.197, Codex 0.169.0 and Gemini CLI
0.61.0 sessions (tests/fixtures/capture/payloads: a file written, a command failed, fixed,
passed) replayed through `ocm-hook`: at the turn's Stop the hook answers in the host's own
"continue with this instruction" form, naming what happened and the ocm session id; it
never repeats, never follows an agent checkpoint or a trivial turn, and obeys the setting."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.agents.nudge import message, settings  # noqa: E402
from ocm.agents.nudge.decide import happened  # noqa: E402
from tests.test_hook_recorded import recorded  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

STOP_EVENT = {"claude-code": "stop", "codex": "stop", "gemini": "after-agent"}


def until_stop(host: str, repo: Path, env: dict[str, str]) -> tuple[bytes, bytes]:
    """Replay the recorded session up to its Stop; returns (stop payload, end payload)."""
    events = recorded(host, repo)
    for event, data in events:
        if event in (STOP_EVENT[host], "session-end"):
            continue
        out = h.run_hook([host, event], data, env, cwd=repo)
        assert out.returncode == 0, out.stderr
    found = dict(events)
    return found[STOP_EVENT[host]], found["session-end"]


def stop(host: str, data: bytes, env: dict[str, str], repo: Path, **override: object) -> str:
    payload = {**json.loads(data), **override}
    out = h.run_hook([host, STOP_EVENT[host]], json.dumps(payload).encode(), env, cwd=repo)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode().strip()


def session_id(repo: Path) -> str:
    [note] = h.sessions(repo)
    return note.stem


@pytest.mark.parametrize("host,key,value", [("claude-code", "decision", "block"),
                                            ("codex", "decision", "block"),
                                            ("gemini", "decision", "deny")])
def test_stop_after_real_work_asks_for_a_checkpoint(host: str, key: str, value: str,
                                                    repo: Path, env: dict[str, str]) -> None:
    data, _ = until_stop(host, repo, env)
    out = json.loads(stop(host, data, env, repo))
    assert out[key] == value, out
    reason = out["reason"]
    sid = session_id(repo)
    assert f'session_id "{sid}"' in reason and "ocm__checkpoint" in reason
    assert f"src/check_{host.split('-')[0]}.py" in reason, reason  # the file it wrote
    assert len(reason) <= message.BUDGET
    # The follow-up turn's Stop (stop_hook_active) and any later Stop: never again.
    assert stop(host, data, env, repo, stop_hook_active=True, last_assistant_message="ok",
                prompt_response="ok") in ("", "{}")
    assert stop(host, data, env, repo, last_assistant_message="later",
                prompt_response="later") in ("", "{}")


def test_the_failing_command_is_named_while_it_still_fails(repo: Path,
                                                           env: dict[str, str]) -> None:
    """Claude Code's run: 04 is the failure; without the passing run (06) the nudge says
    the command still fails."""
    events = recorded("claude-code", repo)
    for event, data in events[:4]:  # start, prompt, write, failure
        assert h.run_hook(["claude-code", event], data, env, cwd=repo).returncode == 0
    out = json.loads(stop("claude-code", dict(events)["stop"], env, repo))
    assert "still fails" in out["reason"], out["reason"]
    assert "`python3 src/check_claude.py`" in out["reason"], out["reason"]


def test_no_nudge_when_the_agent_checkpointed(repo: Path, env: dict[str, str]) -> None:
    data, _ = until_stop("claude-code", repo, env)
    sid = session_id(repo)
    done = h.ocm_here(["checkpoint", "--session", sid, "--goal", "Add the check script",
                  "--pending", "handle a missing file"], env, repo)
    assert done.returncode == 0, done.stderr
    assert stop("claude-code", data, env, repo) == ""


def test_no_nudge_after_a_trivial_turn(repo: Path, env: dict[str, str]) -> None:
    events = dict(recorded("claude-code", repo))
    for event in ("session-start", "user-prompt-submit"):
        assert h.run_hook(["claude-code", event], events[event], env, cwd=repo).returncode == 0
    assert stop("claude-code", events["stop"], env, repo,
                last_assistant_message="The answer is 4.") == ""


@pytest.mark.parametrize("where", ["env", "config"])
def test_nudges_off(where: str, repo: Path, env: dict[str, str]) -> None:
    if where == "env":
        env = {**env, "OCM_NUDGES": "off"}
    else:
        (repo / ".openCodeMemory" / "config.json").write_text('{"nudges": "off"}')
    data, _ = until_stop("claude-code", repo, env)
    assert stop("claude-code", data, env, repo) == ""


def test_cursor_follow_up_message(repo: Path, env: dict[str, str]) -> None:
    """Cursor's stop answers with `followup_message`; `loop_count` > 0 (a follow-up
    already sent) and `status: aborted` (the user stopped it) get none."""
    answers = {}
    for sid, extra in (("c-done", {"status": "completed", "loop_count": 0}),
                       ("c-aborted", {"status": "aborted", "loop_count": 0}),
                       ("c-again", {"status": "completed", "loop_count": 1})):
        for name in ("session-start", "after-file-edit"):
            data = h.payload("cursor", name, repo, sid)
            assert h.run_hook(["cursor", name], data, env, cwd=repo).returncode == 0
        out = h.run_hook(["cursor", "stop"], h.payload("cursor", "stop", repo, sid, **extra),
                         env, cwd=repo)
        answers[sid] = json.loads(out.stdout)
    assert answers["c-aborted"] == {} and answers["c-again"] == {}
    follow = answers["c-done"]["followup_message"]
    assert message.MARKER in follow and "ocm__checkpoint" in follow
    assert any(f'session_id "{note.stem}"' in follow for note in h.sessions(repo)), follow


def test_no_nudge_where_the_host_cannot_continue(repo: Path, env: dict[str, str]) -> None:
    """OpenCode's session.idle after edits: no nudge (tests_e2e/test_nudges.py says why)."""
    base = {"session_id": "ses_nudge_1", "cwd": str(repo)}  # the plugin's payloads
    for name, extra in (
            ("session.created", {"source": "startup"}),
            ("tool.execute.after", {"tool_name": "write", "tool_use_id": "call_1",
                                    "tool_input": {"filePath": str(repo / "src" / "a.py")},
                                    "tool_response": {"output": "Wrote file"}})):
        data = json.dumps({"hook_event_name": name, **base, **extra}).encode()
        assert h.run_hook(["opencode", name], data, env, cwd=repo).returncode == 0
    idle = json.dumps({"hook_event_name": "session.idle", **base}).encode()
    out = h.run_hook(["opencode", "session.idle"], idle, env, cwd=repo)
    assert out.returncode == 0 and out.stdout == b""
    assert "nudged" not in (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()


def test_setting_words() -> None:
    assert settings.mode("/nonexistent", {}) == settings.END
    assert settings.mode("/nonexistent", {"OCM_NUDGES": "ALL"}) == settings.ALL
    assert settings.mode("/nonexistent", {"OCM_NUDGES": "0"}) == settings.OFF
    assert settings.mode("/nonexistent", {"OCM_NUDGES": "bogus"}) == settings.END


def test_what_happened_sentence_and_budget() -> None:
    base = {"files": {"README.md": "modified"}, "failed": [], "edits": 1, "reads": 0}
    now = {"files": {"README.md": "modified", "src/greet.py": "created",
                     "tests/test_greet.py": "created"},
           "failed": ["`python3 -m unittest` failed: `AssertionError`"], "edits": 3, "reads": 2,
           "failing": {"python3 -m unittest": 1.5}}
    text = happened(base, now, "Done.")
    assert text == ("you edited `src/greet.py` and `tests/test_greet.py`; "
                    "`python3 -m unittest` still fails")
    assert happened(now, now, "Done.") == ""
    again = {**now, "failing": {"python3 -m unittest": 9.5}}  # the same command failed again
    assert happened(now, again, "Done.") == "`python3 -m unittest` still fails"
    assert "decision" in happened(now, {**now, "failing": {}}, "I went with argparse over click.")
    many = {**now, "files": {f"src/module_{i}_with_a_long_name.py": "created"
                             for i in range(200)}}
    long = message.compose("2026-11-27_01-00_claude-code", happened(base, many, ""))
    assert len(long) <= message.BUDGET and "196 more" in long


def test_doctor_says_what_nudges_do(repo: Path, env: dict[str, str]) -> None:
    out = h.ocm_here(["doctor", "--json"], env, repo)
    check = {c["what"]: c for c in json.loads(out.stdout)}["nudges"]
    assert check["detail"].startswith("end (") and "Claude Code" in check["detail"]
    assert "extra model turn" in check["detail"] and "OCM_NUDGES=off" in check["fix"]
    (repo / ".openCodeMemory" / "config.json").write_text('{"nudges": "off"}')
    out = h.ocm_here(["doctor", "--json"], env, repo)
    check = {c["what"]: c for c in json.loads(out.stdout)}["nudges"]
    assert check["detail"].startswith("off (config.json")


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_before_a_git_commit_with_nudges_all(host: str, repo: Path, env: dict[str, str]) -> None:
    """Claude Code's and Codex's PreToolUse for `git commit` (the recorded Bash payload as it
    arrives before the call): context asking for a checkpoint first, with `nudges: all` only; any
    other command, or the default setting, gets nothing."""
    until_stop(host, repo, env)
    bash = json.loads(dict(recorded(host, repo))["post-tool-use"])  # the last: a Bash call
    bash.update(hook_event_name="PreToolUse", tool_name="Bash")
    bash.pop("tool_response", None)

    def before(command: str, environ: dict[str, str]) -> str:
        payload = json.dumps({**bash, "tool_input": {"command": command}}).encode()
        out = h.run_hook([host, "pre-tool-use"], payload, environ, cwd=repo)
        assert out.returncode == 0, out.stderr
        return out.stdout.decode().strip()

    assert before("git commit -m 'check script'", env) == ""  # default: end of turn only
    every = {**env, "OCM_NUDGES": "all"}
    assert before("git status", every) == ""
    out = json.loads(before("git add -A && git commit -m 'check script'", every))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert "about to commit" in context and f'session_id "{session_id(repo)}"' in context
    assert f"`src/check_{host.split('-')[0]}.py`" in context
    sid = session_id(repo)
    assert h.ocm_here(["checkpoint", "--session", sid, "--goal", "check script"], env,
                 repo).returncode == 0
    assert before("git commit -m 'check script'", every) == ""  # saved: nothing to ask


def test_failure_left_in_two_sessions_becomes_a_gotcha_candidate(repo: Path,
                                                                  env: dict[str, str]) -> None:
    """Claude Code's recorded start, prompt, write and failing Bash (04), then its session
    end, twice under two session ids: the first session's note holds no candidate (one
    session alone is noise); the second's names the failure and the first session."""
    events = recorded("claude-code", repo)
    notes = []
    for sid in ("first-session", "second-session"):
        for event, data in [*events[:4], events[-1]]:
            payload = json.dumps({**json.loads(data), "session_id": sid}).encode()
            assert h.run_hook(["claude-code", event], payload, env, cwd=repo).returncode == 0
        [note] = [p for p in h.sessions(repo) if p not in notes]
        notes.append(note)
    first, second = (p.read_text() for p in notes)
    assert "Gotcha candidate" not in first
    line = next(ln for ln in second.splitlines() if "Gotcha candidate" in ln)
    assert "`python3 src/check_claude.py`" in line and notes[0].stem in line, line
    assert "No such file or directory" in line
    # A third session that fixed it (the whole recorded run, 06 passes): no candidate.
    for event, data in events:
        payload = json.dumps({**json.loads(data), "session_id": "third-session"}).encode()
        assert h.run_hook(["claude-code", event], payload, env, cwd=repo).returncode == 0
    [third] = [p for p in h.sessions(repo) if p not in notes]
    assert "Gotcha candidate" not in third.read_text()


def _send(event: str, data: bytes, env: dict[str, str], repo: Path, **override: object) -> str:
    payload = json.dumps({**json.loads(data), **override}).encode()
    out = h.run_hook(["claude-code", event], payload, env, cwd=repo)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode().strip()


def _turn(calls: list[tuple[str, bytes]], turn: int, env: dict[str, str], repo: Path) -> str:
    """One more turn of Claude Code's recorded session (each tool call a new id), its Stop
    answered by ocm, then the follow-up Stop a nudge brings. Returns the first Stop's nudge
    ("" when none)."""
    events = dict(recorded("claude-code", repo))
    _send("user-prompt-submit", events["user-prompt-submit"], env, repo,
          prompt=f"turn {turn}: run the check again")
    for i, (name, data) in enumerate(calls):
        _send(name, data, env, repo, tool_use_id=f"toolu_turn{turn}_{i}")
    out = _send("stop", events["stop"], env, repo, last_assistant_message=f"turn {turn} done")
    reason = json.loads(out)["reason"] if out else ""
    if reason:  # the model answers the nudge (saves nothing here) and stops again
        assert _send("stop", events["stop"], env, repo, stop_hook_active=True,
                     last_assistant_message=f"turn {turn}: nothing to save") == ""
    return reason


@pytest.mark.parametrize("fixed_between", [True, False], ids=["fail-pass-fail", "fail-fail"])
def test_a_re_failure_is_named_again(fixed_between: bool, repo: Path,
                                     env: dict[str, str]) -> None:
    """Issue #25: the same command failing again in a later turn only moves its Failed
    Commands bullet; the nudge still says it fails (fail → pass → fail, fail → fail)."""
    run = recorded("claude-code", repo)  # 03 write, 04 fails, 05 edit, 06 passes
    write, fail, edit, passes = run[2], run[3], run[4], run[5]
    _send("session-start", dict(run)["session-start"], env, repo)
    first = _turn([write, fail], 1, env, repo)
    assert "`python3 src/check_claude.py` still fails" in first, first
    if fixed_between:
        fixed = _turn([edit, passes], 2, env, repo)
        assert "passed after a fix" in fixed and "still fails" not in fixed, fixed
    again = _turn([fail], 3, env, repo)
    assert "`python3 src/check_claude.py` still fails" in again, again
    assert "you edited" not in again  # no file changed in that turn
    assert _turn([], 4, env, repo) == ""  # nothing new after it: no nudge


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_after_a_compaction_the_brief_asks_for_a_checkpoint(host: str, repo: Path,
                                                             env: dict[str, str]) -> None:
    """Claude Code 2.1.197 runs SessionStart hooks with `source: "compact"` after compacting
    and gives their additionalContext to the model (its PreCompact output only instructs the
    summariser); Codex 0.171's SessionStart schema lists the same source. Unsaved work is
    named there; not after a checkpoint, not with nudges off."""
    data, _ = until_stop(host, repo, env)
    start = json.loads(dict(recorded(host, repo))["session-start"])

    def compacted(environ: dict[str, str]) -> str:
        for seen in (repo / ".openCodeMemory" / ".hooks" / "seen").glob("*"):
            seen.unlink()  # a later compaction, not a copy of the last one (30 s dedupe)
        payload = json.dumps({**start, "source": "compact"}).encode()
        out = h.run_hook([host, "session-start"], payload, environ, cwd=repo)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]

    assert message.MARKER not in compacted({**env, "OCM_NUDGES": "off"})
    context = compacted(env)
    sid = session_id(repo)
    assert "compacted" in context  # the brief is still there
    reminder = context[context.index(f"[{message.MARKER}]"):]
    assert f"`src/check_{host.split('-')[0]}.py`" in reminder
    assert f'ocm__checkpoint with session_id "{sid}"' in reminder and len(reminder) < 400
    assert h.ocm_here(["checkpoint", "--session", sid, "--goal", "check script"], env,
                 repo).returncode == 0
    assert message.MARKER not in compacted(env)


@pytest.mark.hook_in_process(False)  # what a new process imports
@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_shell_call_that_is_no_commit_exits_early(host: str, repo: Path,
                                                    env: dict[str, str], tmp_path: Path) -> None:
    """PreToolUse(Bash) runs for every shell call: one that is not a commit answers nothing
    before the dispatcher is imported (bench/nudges.py hook-cost measures what it saves)."""
    trace = tmp_path / "modules.txt"
    payload = json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "pytest -q"}}).encode()
    traced = {**env, "OCM_NUDGES": "all", "OCM_HOOK_TRACE_MODULES": str(trace)}
    out = h.run_hook([host, "pre-tool-use"], payload, traced, cwd=repo)
    assert out.returncode == 0 and out.stdout == b""
    modules = set(trace.read_text().split())
    assert "ocm.hook" in modules and "ocm.agents.dispatch" not in modules
    assert not (repo / ".openCodeMemory" / ".hooks" / "hook.log").exists()
