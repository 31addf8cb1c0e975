"""Slice 1: the hook entry point and Claude Code's events, end to end (in process where
the test is about what the hook says and leaves, not its process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.markdown import Document  # noqa: E402

# What the hooks say and leave in the vault, through ocm-hook's entry point in this process;
# a process where the test is about one (what it imports, a real stdin pipe).
pytestmark = pytest.mark.hook_in_process

SID = "5e1f3c2a-claude-0001"




def hook(repo: Path, env: dict[str, str], name: str, event: str | None = None,
         sid: str = SID, **override):
    event = event or name
    data = h.payload("claude-code", name, repo, sid, **override)
    out = h.run_hook(["claude-code", event], data, env, cwd=repo)
    assert out.returncode == 0, out.stderr
    return out


def note(repo: Path, index: int = 0) -> Document:
    return Document.parse(h.sessions(repo)[index].read_text())


def test_session_start_creates_note_and_injects_brief(repo: Path, env: dict[str, str]) -> None:
    out = hook(repo, env, "session-start")
    data = json.loads(out.stdout)
    spec = data["hookSpecificOutput"]
    assert spec["hookEventName"] == "SessionStart"
    [path] = h.sessions(repo)
    doc = note(repo)
    fm = doc.frontmatter.data
    assert fm["agent_session_id"] == SID and fm["tool"] == "claude-code"
    assert fm["status"] == "open" and fm["git_sha_start"] == h.git(repo, "rev-parse", "HEAD")[:12]
    assert f"Current ocm session id: {path.stem}" in spec["additionalContext"]
    assert len(spec["additionalContext"]) <= 10_000
    assert out.stderr == b""


def test_prompt_edits_and_reads_are_journaled_then_folded(repo: Path,
                                                          env: dict[str, str]) -> None:
    hook(repo, env, "session-start")
    secret = "sk-ant-api03-" + "A" * 40
    out = hook(repo, env, "user-prompt-submit",
               prompt=f"Add exponential backoff to the embedding client, key {secret}")
    assert out.stdout == b""  # prompt recall is off by default
    (repo / "src").mkdir()
    (repo / "src" / "backoff.py").write_text("x")
    for name in ("post-tool-use-write", "post-tool-use-edit", "post-tool-use-read"):
        assert hook(repo, env, name, event="post-tool-use").stdout == b""
    journal = (repo / ".openCodeMemory" / ".hooks" / "journal.jsonl").read_text()
    assert secret not in journal and "REDACTED" in journal
    # Any read folds the journal first: the session note is complete and searchable.
    found = h.ocm_here(["search", "exponential backoff", "--json"], env, repo)
    assert found.returncode == 0, found.stderr
    assert [hit["kind"] for hit in json.loads(found.stdout)] == ["session"]
    files = json.loads(h.ocm_here(["files", SID, "--json"], env, repo).stdout)
    assert {(f["path"], f["change_type"]) for f in files} == {
        ("src/backoff.py", "created"), ("README.md", "modified")}
    doc = note(repo)
    assert doc.frontmatter.data["reads"] == 1 and doc.frontmatter.data["edits"] == 2
    text = h.sessions(repo)[0].read_text()
    assert "## Prompts" in text and secret not in text
    assert not (repo / ".openCodeMemory" / ".hooks" / "journal.jsonl").exists() or not (
        repo / ".openCodeMemory" / ".hooks" / "journal.jsonl").read_text()


def test_duplicate_events_are_ignored(repo: Path, env: dict[str, str]) -> None:
    first = hook(repo, env, "session-start")
    second = hook(repo, env, "session-start")
    assert first.stdout and second.stdout == b""
    (repo / "src").mkdir()
    (repo / "src" / "backoff.py").write_text("x")
    for _ in range(2):
        hook(repo, env, "post-tool-use-write", event="post-tool-use")
        hook(repo, env, "user-prompt-submit")
    h.fold(repo)
    [path] = h.sessions(repo)
    text = path.read_text()
    assert text.count("src/backoff.py") == 1
    assert text.count("Add exponential backoff") == 1


GARBAGE = [
    b"",
    b"not json at all",
    b"[1, 2, 3]",
    b'{"session_id": "abc", "cwd": ',
    b"\xff\xfe\x00garbage",
    b'{"session_id": 42, "cwd": 7, "tool_name": null, "tool_input": "x"}',
    b'{"session_id": "../../etc/passwd", "hook_event_name": "PostToolUse", '
    b'"tool_name": "Write", "tool_input": {"file_path": "/etc/passwd"}}',
]


def test_garbage_is_a_logged_noop(repo: Path, env: dict[str, str]) -> None:
    for event in ("session-start", "post-tool-use", "session-end"):
        for data in GARBAGE:
            out = h.run_hook(["claude-code", event], data, env, cwd=repo)
            assert out.returncode == 0, (event, data)
            assert out.stdout == b"" or isinstance(json.loads(out.stdout), dict)
    for path in h.sessions(repo):  # ids are sanitised; files outside the project ignored
        text = path.read_text()
        assert "/etc/passwd" not in text and "../" not in text
    assert "not JSON" in (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()


@pytest.mark.hook_in_process(False)  # 9 MB through a real stdin pipe
def test_huge_payload_and_unknown_event(repo: Path, env: dict[str, str]) -> None:
    huge = b'{"session_id": "x", "prompt": "' + b"a" * 9_000_000 + b'"}'
    for args, data in ((["claude-code", "user-prompt-submit"], huge),
                       (["claude-code", "notification"], b'{"session_id": "x"}'),
                       (["no-such-host", "session-start"], b'{"session_id": "x"}')):
        out = h.run_hook(args, data, env, cwd=repo)
        assert out.returncode == 0 and out.stdout == b""
    log = (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()
    assert "over" in log and "no-op" in log
    assert h.sessions(repo) == []


def test_no_vault_creates_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    root = h.make_repo(tmp_path / "bare")
    before = sorted(p.name for p in root.iterdir())
    for name in ("session-start", "user-prompt-submit", "session-end"):
        out = h.run_hook(["claude-code", name], h.payload("claude-code", name, root, SID), env,
                         cwd=root)
        assert out.returncode == 0 and out.stdout == b""
    assert sorted(p.name for p in root.iterdir()) == before


def test_event_from_payload_when_omitted(repo: Path, env: dict[str, str]) -> None:
    out = h.run_hook(["claude-code"], h.payload("claude-code", "session-start", repo, SID), env,
                     cwd=repo)
    assert json.loads(out.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    out = h.run_hook([], h.payload("claude-code", "stop", repo, SID), env, cwd=repo)
    assert out.returncode == 0 and out.stdout == b""


def test_compaction_marks_trigger_and_reinjects(repo: Path, env: dict[str, str]) -> None:
    hook(repo, env, "session-start")
    assert hook(repo, env, "pre-compact").stdout == b""
    assert note(repo).frontmatter.data["trigger"] == "context_limit"
    out = hook(repo, env, "session-start-compact", event="session-start")
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "compacted" in context and "ocm__checkpoint" in context
    assert len(h.sessions(repo)) == 1


def test_session_end_closes_with_git_facts(repo: Path, env: dict[str, str]) -> None:
    hook(repo, env, "session-start")
    (repo / "README.md").write_text("# demo\nmore\n")
    hook(repo, env, "post-tool-use-edit", event="post-tool-use")
    assert hook(repo, env, "session-end").stdout == b""
    fm = note(repo).frontmatter.data
    assert fm["status"] == "closed" and fm["ended_at"] and fm["git_sha_end"]
    assert "1 file changed" in h.sessions(repo)[0].read_text()


@pytest.mark.hook_in_process(False)  # what a new process imports
@pytest.mark.parametrize("name,event", [("session-start", "session-start"),
                                        ("post-tool-use-write", "post-tool-use"),
                                        ("session-end", "session-end")])
def test_hook_never_imports_whoosh_or_mcp(repo: Path, env: dict[str, str], tmp_path: Path,
                                          name: str, event: str) -> None:
    trace = tmp_path / f"modules-{event}.txt"
    hook(repo, env, "session-start")
    data = h.payload("claude-code", name, repo, SID)
    out = h.run_hook(["claude-code", event], data, {**env, "OCM_HOOK_TRACE_MODULES": str(trace)},
                     cwd=repo)
    assert out.returncode == 0
    modules = trace.read_text().split()
    assert "ocm.agents.dispatch" in modules
    assert not [m for m in modules if m.split(".")[0] in (
        "whoosh", "mcp", "click", "numpy", "wordllama", "tokenizers")]


def test_ocm_hook_cli_command_is_the_same_entry_point(repo: Path, env: dict[str, str]) -> None:
    data = h.payload("claude-code", "session-start", repo, SID)
    out = h.subprocess.run([h.OCM, "hook", "claude-code", "session-start"], input=data,
                           capture_output=True, env=env, cwd=repo, timeout=60)
    assert out.returncode == 0
    assert json.loads(out.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    out = h.subprocess.run([h.OCM, "hook", "claude-code", "post-tool-use"], input=b"garbage",
                           capture_output=True, env=env, cwd=repo, timeout=60)
    assert out.returncode == 0 and out.stdout == b""


def test_prompt_recall_is_opt_in_and_budgeted(repo: Path, env: dict[str, str]) -> None:
    made = h.ocm_here(["remember", "The embedding client must use exponential backoff with jitter; "
                  "the provider bans clients that retry in lockstep.", "--type", "decision",
                  "--title", "Embedding client retries use exponential backoff"], env, repo)
    assert made.returncode == 0, made.stderr
    hook(repo, env, "session-start")
    assert hook(repo, env, "user-prompt-submit").stdout == b""  # off by default
    on = {**env, "OCM_PROMPT_RECALL": "3"}
    data = h.payload("claude-code", "user-prompt-submit", repo, SID)
    out = h.run_hook(["claude-code", "user-prompt-submit"], data, on, cwd=repo)
    spec = json.loads(out.stdout)["hookSpecificOutput"]
    assert spec["hookEventName"] == "UserPromptSubmit"
    assert "Embedding client retries use exponential backoff" in spec["additionalContext"]
    assert len(spec["additionalContext"]) <= 1500
    unrelated = h.payload("claude-code", "user-prompt-submit", repo, SID,
                          prompt="Rename the CSS variables in the footer")
    assert h.run_hook(["claude-code", "user-prompt-submit"], unrelated, on,
                      cwd=repo).stdout == b""


def test_brief_budget_is_configurable_and_says_what_was_dropped(repo: Path,
                                                                env: dict[str, str]) -> None:
    import os

    from ocm.project import Project

    os.environ["OCM_HOME"] = env["OCM_HOME"]
    project = Project.open(cwd=repo)
    for i in range(30):
        project.remember(f"Gotcha number {i}: the staging database resets nightly at 02:{i:02d}.",
                         "gotcha", title=f"Staging gotcha {i}")
    data = h.payload("claude-code", "session-start", repo, SID)
    out = h.run_hook(["claude-code", "session-start"], data, {**env, "OCM_BRIEF_BUDGET": "900"},
                     cwd=repo)
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 900 and "did not fit" in context and "## Gotchas" in context
    out = h.run_hook(["claude-code", "session-start", "--budget", "50000"],
                     h.payload("claude-code", "session-start-compact", repo, SID), env,
                     cwd=repo)
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 10_000  # never above the host's cap
