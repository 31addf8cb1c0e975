"""Issue #25, seed 004 §15: the count-based fallback. After `OCM_NUDGE_EDITS` edits without a
checkpoint, the next prompt's hook answer asks for `ocm__checkpoint` with the session id and
names the files; once per window (restarted by a checkpoint and after it fired). Real
payloads: Copilot CLI 1.0.102 (its Stop cannot speak, so the fallback runs at the default
`nudges: end`), Claude Code, Codex and Gemini CLI (their Stop nudges; the fallback only with
`nudges: all`), replayed through `ocm-hook`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.agents.nudge import count, message, settings  # noqa: E402
from tests.test_hook_copilot import WIRED, payloads  # noqa: E402
from tests.test_hook_nudge import STOP_EVENT, session_id  # noqa: E402
from tests.test_hook_recorded import recorded  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

PROMPT_EVENT = {"claude-code": "user-prompt-submit", "codex": "user-prompt-submit",
                "gemini": "before-agent"}


def context_of(host: str, out: str) -> str:
    """The text the host's model receives from a prompt hook's answer ("" for none)."""
    data = json.loads(out) if out.strip() else {}
    if host == "copilot":
        return str(data.get("additionalContext") or "")
    return str((data.get("hookSpecificOutput") or {}).get("additionalContext") or "")


class Copilot:
    """Copilot CLI's recorded session (create src/greet.py, run it, edit it, run it)."""

    def __init__(self, repo: Path, env: dict[str, str], tmp: Path) -> None:
        self.repo, self.env = repo, env
        self.events = [(e, d) for e, d in payloads("copilot", repo, tmp / "events.jsonl")
                       if e in WIRED]
        self.n = 0

    def send(self, event: str, data: dict, **override: object) -> str:
        self.n += 1  # a new payload each time (the journal folds one payload once)
        payload = {**data, "timestamp": data.get("timestamp", 0) + self.n, **override}
        out = h.run_hook(["copilot", WIRED[event]], json.dumps(payload).encode(), self.env,
                         cwd=self.repo)
        assert out.returncode == 0, out.stderr
        return out.stdout.decode()

    def until_stop(self) -> None:
        for event, data in self.events:
            if event not in ("agentStop", "sessionEnd"):
                self.send(event, data)

    def prompt(self, text: str) -> str:
        return context_of("copilot", self.send("userPromptSubmitted",
                                               dict(self.events)["userPromptSubmitted"],
                                               prompt=text))

    def edits(self) -> None:
        """The two recorded edits of src/greet.py again (create, then edit)."""
        for event, data in self.events:
            if event == "postToolUse" and data["toolName"] in ("create", "edit"):
                self.send(event, data)


@pytest.fixture()
def copilot(repo: Path, env: dict[str, str], tmp_path: Path) -> Copilot:
    return Copilot(repo, {**env, "OCM_NUDGE_EDITS": "2"}, tmp_path)


def test_copilot_asks_at_the_next_prompt_once_per_window(copilot: Copilot,
                                                         repo: Path) -> None:
    copilot.until_stop()
    text = copilot.prompt("now add a unit test")
    sid = session_id(repo)
    assert text.startswith(f"[{message.MARKER}] You made 2 edits to `src/greet.py`"), text
    assert f'ocm__checkpoint with session_id "{sid}"' in text and len(text) < 300
    assert copilot.prompt("and a docstring") == ""  # once per window
    copilot.edits()
    assert "You made 2 edits" in copilot.prompt("rename it")  # the next window
    log = (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()
    assert log.count("nudged after 2 edits") == 2


def test_a_checkpoint_restarts_the_window(copilot: Copilot, repo: Path,
                                          env: dict[str, str]) -> None:
    copilot.until_stop()
    sid = session_id(repo)
    done = h.ocm_here(["checkpoint", "--session", sid, "--goal", "greet prints hello"], env, repo)
    assert done.returncode == 0, done.stderr
    assert copilot.prompt("now add a unit test") == ""  # saved: a new window starts here
    copilot.edits()
    assert "You made 2 edits" in copilot.prompt("rename it")


@pytest.mark.parametrize("setting,expected", [("off", False), ("end", True), ("all", True)])
def test_copilot_setting(setting: str, expected: bool, copilot: Copilot, repo: Path) -> None:
    copilot.env["OCM_NUDGES"] = setting
    copilot.until_stop()
    assert bool(copilot.prompt("now add a unit test")) is expected


def test_below_the_threshold_nothing(copilot: Copilot) -> None:
    copilot.env["OCM_NUDGE_EDITS"] = "3"
    copilot.until_stop()
    assert copilot.prompt("now add a unit test") == ""


@pytest.mark.parametrize("host", sorted(PROMPT_EVENT))
def test_stop_hosts_only_with_nudges_all(host: str, repo: Path, env: dict[str, str]) -> None:
    """Claude Code, Codex, Gemini: their end-of-turn nudge covers `end`; `all` adds the
    fallback, in the host's own prompt-hook answer."""
    events = recorded(host, repo)
    for event, data in events:
        if event not in (STOP_EVENT[host], "session-end"):
            assert h.run_hook([host, event], data, env, cwd=repo).returncode == 0
    prompt = json.loads(dict(events)[PROMPT_EVENT[host]])

    def ask(text: str, environ: dict[str, str]) -> str:
        payload = json.dumps({**prompt, "prompt": text}).encode()
        out = h.run_hook([host, PROMPT_EVENT[host]], payload, environ, cwd=repo)
        assert out.returncode == 0, out.stderr
        return context_of(host, out.stdout.decode())

    two = {**env, "OCM_NUDGE_EDITS": "2"}
    assert ask("next step", two) == ""
    text = ask("and the next", {**two, "OCM_NUDGES": "all"})
    assert text.startswith(f"[{message.MARKER}] You made 2 edits to `"), text
    assert f"`src/check_{host.split('-')[0]}.py`" in text, text
    assert f'session_id "{session_id(repo)}"' in text


def test_hosts_without_a_prompt_channel() -> None:
    for host in ("opencode", "vscode", "windsurf", "cursor"):
        assert not count.applies(host, "/nonexistent", {"OCM_NUDGES": "all"})
    assert count.applies("copilot", "/nonexistent", {})
    assert not count.applies("claude-code", "/nonexistent", {})


def test_threshold_setting(tmp_path: Path) -> None:
    assert settings.edits_threshold(str(tmp_path), {}) == settings.EDITS_DEFAULT
    assert settings.edits_threshold(str(tmp_path), {"OCM_NUDGE_EDITS": "4"}) == 4
    (tmp_path / "config.json").write_text('{"nudge_edits": 6}')
    assert settings.edits_threshold(str(tmp_path), {}) == 6
    for bad in ("0", "-3", "ten", ""):  # not a whole number >= 1: the next source
        assert settings.edits_threshold(str(tmp_path), {"OCM_NUDGE_EDITS": bad}) == 6
    (tmp_path / "config.json").write_text('{"nudge_edits": true}')
    assert settings.edits_threshold(str(tmp_path), {}) == settings.EDITS_DEFAULT
