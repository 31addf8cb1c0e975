"""The automatic bug_fix (a failed command, edits, the same command passing: recorded by the
hooks from real payloads) and the agent's own gotcha about the same failure end as ONE active
record, in either order: the agent's text, with the automatic record's command and error kept
under `## Evidence`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.errors import OcmError  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402
from ocm.vault.memories import MemoryNote  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

SID = "autofix-twins-1"
GOTCHA = ("backoff() must stop after 8 retries: test_backoff asserted 9 == 8 while the loop "
          "used <= instead of <.")
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def send(repo: Path, env: dict[str, str], fixture: str, event: str) -> None:
    out = h.run_hook(["claude-code", event], h.payload("claude-code", fixture, repo, SID), env,
                     cwd=repo)
    assert out.returncode == 0, out.stderr


def fail_edit_pass(repo: Path, env: dict[str, str]) -> None:
    send(repo, env, "post-tool-use-failure-bash", "post-tool-use-failure")
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "backoff.py").write_text("x")
    send(repo, env, "post-tool-use-write", "post-tool-use")
    send(repo, env, "post-tool-use-edit", "post-tool-use")
    send(repo, env, "post-tool-use-bash", "post-tool-use")
    send(repo, env, "stop", "stop")
    h.fold(repo)


def records(repo: Path) -> list[MemoryNote]:
    """The readable records (a test may break one on purpose)."""
    folder = repo / ".openCodeMemory" / "memories"
    out = []
    for path in sorted(folder.rglob("*.md")):
        try:
            out.append(MemoryNote(Document.parse(path.read_text())))
        except OcmError:
            continue
    return out


def active(repo: Path) -> list[MemoryNote]:
    return [note for note in records(repo) if note.status == "active"]


def remember(repo: Path, env: dict[str, str], text: str, *extra: str) -> dict:
    out = h.ocm_here(["remember", text, "--type", "gotcha", "--file", "src/backoff.py", "--json",
                      *extra], env, repo)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_agent_gotcha_after_the_automatic_bug_fix_supersedes_it(repo: Path,
                                                                env: dict[str, str]) -> None:
    send(repo, env, "session-start", "session-start")
    fail_edit_pass(repo, env)
    [auto] = active(repo)
    assert auto.type == "bug_fix" and "auto-captured" in auto.str_list("tags")

    made = remember(repo, env, f"{GOTCHA} The CI token {SECRET} is not needed for it.")
    assert made["status"] == "active" and made["changed"] is True
    assert f"merged the automatic bug_fix {auto.id}" in made["notice"]
    assert "pytest -q tests/test_backoff.py" in made["notice"]
    [gotcha] = active(repo)  # one active record of the failure, the agent's
    assert gotcha.id == made["id"] and gotcha.type == "gotcha"
    assert gotcha.content.startswith("backoff() must stop after 8 retries")
    assert f"## Evidence ({auto.key})" in gotcha.content
    assert "AssertionError: assert 9 == 8" in gotcha.content
    assert gotcha.str_list("files") == ["src/backoff.py", "README.md"]
    assert gotcha.supersedes == auto.id
    old = next(n for n in records(repo) if n.id == auto.id)
    assert old.status == "superseded" and old.superseded_by == gotcha.id
    assert "same failure" in str(old.fm.get("resolution"))
    every = "".join(p.read_text() for p in (repo / ".openCodeMemory").rglob("*.md"))
    assert SECRET not in every  # redacted before the record was compared or merged


def test_automatic_bug_fix_after_the_agent_gotcha_makes_no_twin(repo: Path,
                                                                 env: dict[str, str]) -> None:
    send(repo, env, "session-start", "session-start")
    made = remember(repo, env, GOTCHA)
    other = remember(repo, env, "backoff() uses full jitter between 0 and the cap; tests "
                                "seed random for determinism.")
    fail_edit_pass(repo, env)
    assert not (repo / ".openCodeMemory" / "memories" / "bug_fix").exists() or not list(
        (repo / ".openCodeMemory" / "memories" / "bug_fix").glob("*.md"))
    assert sorted(n.id for n in active(repo)) == sorted([made["id"], other["id"]])
    gotcha = next(n for n in records(repo) if n.id == made["id"])
    assert gotcha.content.startswith("backoff() must stop after 8 retries")
    assert gotcha.content.count("## Evidence (auto-fix-") == 1
    assert "pytest -q tests/test_backoff.py" in gotcha.content
    assert "README.md" in gotcha.str_list("files")
    untouched = next(n for n in records(repo) if n.id == other["id"])
    assert "## Evidence" not in untouched.content
    session = h.sessions(repo)[0].read_text()
    assert f"gotcha memory {made['id']}" in session  # the record that holds the fix

    # The same failure folded again (a duplicate journal) adds nothing.
    send(repo, env, "post-tool-use-failure-bash", "post-tool-use-failure")
    send(repo, env, "post-tool-use-edit", "post-tool-use")
    send(repo, env, "post-tool-use-bash", "post-tool-use")
    before = Path(made["markdown_path"]).read_text()
    h.fold(repo)
    assert sorted(n.id for n in active(repo)) == sorted([made["id"], other["id"]])
    assert Path(made["markdown_path"]).read_text() == before


def test_broken_agent_record_never_breaks_the_automatic_bug_fix(repo: Path,
                                                                env: dict[str, str]) -> None:
    send(repo, env, "session-start", "session-start")
    made = remember(repo, env, GOTCHA)
    path = Path(made["markdown_path"])
    path.write_text(path.read_text().replace("type: gotcha", "type: gotcha\ntags: [a, "))
    fail_edit_pass(repo, env)
    [auto] = [n for n in active(repo) if n.type == "bug_fix"]
    assert "AssertionError: assert 9 == 8" in auto.content
    log = (repo / ".openCodeMemory" / ".hooks" / "hook.log")
    assert not log.exists() or "Traceback" not in log.read_text()


def test_the_automatic_bug_fix_is_found_behind_many_newer_agent_bug_fixes(
        repo: Path, env: dict[str, str]) -> None:
    """The search for the automatic record looks only at files named like one (AUTO_NAME):
    more than RECENT agent bug_fix records written after it, one of them with a name like
    an automatic record's but no automatic key, neither hide it nor pass for it."""
    from ocm.vault.alike.autofix import AUTO_NAME, RECENT

    send(repo, env, "session-start", "session-start")
    fail_edit_pass(repo, env)
    [auto] = active(repo)
    folder = repo / ".openCodeMemory" / "memories" / "bug_fix"
    later = folder.joinpath(f"{auto.id}.md").stat().st_mtime + 10
    names = [f"agent-fix-{n:03d}" for n in range(RECENT + 5)] + [f"{AUTO_NAME}by-hand-aa11bb"]
    for n, name in enumerate(names):
        path = folder / f"{name}.md"
        path.write_text(f"---\nid: {name}\ntype: bug_fix\ntitle: Agent fix {n}\nstatus: active\n"
                        f"files:\n- src/backoff.py\nsession: {SID}\n---\n\n{GOTCHA}\n")
        os.utime(path, (later + n, later + n))

    made = remember(repo, env, GOTCHA)
    assert f"merged the automatic bug_fix {auto.id}" in made["notice"]
    old = next(n for n in records(repo) if n.id == auto.id)
    assert old.status == "superseded" and old.superseded_by == made["id"]
    by_hand = next(n for n in records(repo) if n.id == f"{AUTO_NAME}by-hand-aa11bb")
    assert by_hand.status == "active"
