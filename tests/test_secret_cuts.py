# ruff: noqa: F811 - the `world` fixture is imported and used as a parameter
"""Redaction before every cut, the team merge driver and the slug (issue #31): a secret
straddling a cut of a failed command's output (200,000 characters in the failure hook;
20,000 and first/last 1,500 in the transcript fold) leaves nothing; a key a person typed into
a note reaches git's merge result redacted; a bare 32-hex word never becomes a file name.
Everything through the real entry points: `ocm-hook`, `ocm merge-note`, the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.hooks import harness as h
from tests.test_capture import _payloads, _transcripts, replay, world  # noqa: F401 - fixture
from tests.test_secret_paths import leaks
from tests.test_stress_writers import load_stress

stress = load_stress()
CORPUS = stress.secret_corpus()


def _secret(kind: str) -> str:
    return next(secret for k, _b, secret, _a in CORPUS if k == kind)


def _straddling(cut: int, secret: str, size: int) -> str:
    """Lines of output with `Error: <secret>` placed so the cut falls 20 characters into the
    secret, padded to `size` characters."""
    line = "Error: " + secret
    head = "ok\n" * ((cut - len("Error: ") - 20) // 3)
    head += "x" * (cut - len("Error: ") - 20 - len(head))
    text = head + line + "\n"
    assert text.index(secret) + 20 == cut
    return text + "y\n" * max(0, (size - len(text)) // 2)


@pytest.mark.hook_in_process  # what the hook writes, not its process
def test_the_failure_hook_redacts_before_its_200000_cut(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home")
    repo = h.make_repo(tmp_path / "proj")
    h.init_vault(repo, env)
    token = _secret("github_token")
    sid = "cut-200k"
    h.run_hook(["claude-code", "session-start"],
               h.payload("claude-code", "session-start", repo, sid), env, cwd=repo)
    error = _straddling(200_000, token, 200_100)
    done = h.run_hook(["claude-code", "post-tool-use-failure"], h.payload(
        "claude-code", "post-tool-use-failure-bash", repo, sid, error=error), env, cwd=repo)
    assert done.returncode == 0
    h.fold(repo)
    assert leaks([repo / ".openCodeMemory", Path(env["OCM_HOME"])], [token]) == []


@pytest.mark.hook_in_process  # what the hook writes, not its process
@pytest.mark.parametrize(("cut", "size"), [(20_000, 25_000), (1_500, 6_000)])
def test_the_transcript_fold_redacts_before_its_cuts(world: tuple[Path, dict[str, str], Path],
                                                     cut: int, size: int) -> None:
    repo, env, home = world
    target = replay("claude-code", repo, env, home)
    token = _secret("stripe_key")
    records = [
        {"type": "assistant", "timestamp": "2026-11-23T13:30:00.000Z", "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": "toolu_cut",
                                              "name": "Bash", "input": {"command": "pytest"}}]}},
        {"type": "user", "timestamp": "2026-11-23T13:30:01.000Z", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_cut",
                                         "is_error": True,
                                         "content": _straddling(cut, token, size)}]}}]
    with target.open("a") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in records))
    done = h.run_hook(["claude-code", "stop"], dict(_payloads("claude-code", repo, home))["stop"],
                      env, cwd=repo)
    assert done.returncode == 0
    [transcript] = _transcripts(repo)
    assert "pytest" in transcript.read_text()
    assert leaks([repo / ".openCodeMemory", Path(env["OCM_HOME"])], [token]) == []


def test_the_merge_driver_redacts_a_hand_edited_note(tmp_path: Path) -> None:
    token = _secret("openai_key")
    base = "---\nid: m1\ntitle: Deploy\n---\n\n# Deploy\n\nRun the script.\n"
    ours = base.replace("Run the script.", "Run the script.\nIt needs " + token + " today.")
    theirs = base.replace("title: Deploy", "title: Deploy steps")
    files = {}
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        files[name] = tmp_path / f"{name}.md"
        files[name].write_text(text)
    done = subprocess.run([h.OCM, "merge-note", str(files["base"]), str(files["ours"]),
                           str(files["theirs"]), "memories/m1.md"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    merged = files["ours"].read_text()
    assert "title: Deploy steps" in merged and "It needs [REDACTED:openai_key] today." in merged
    assert token[:16] not in merged


def test_a_32_hex_word_in_a_slug_is_left_out(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home")
    repo = h.make_repo(tmp_path / "proj")
    h.init_vault(repo, env)
    value = "5f4dcc3b5aa765d61d8327deb882cf99"
    done = h.ocm_here(["checkpoint", "--tool", "claude-code", "--slug", f"rotate {value} key",
                       "--goal", "Rotate the key."], env, repo)
    assert done.returncode == 0, done.stderr
    assert leaks([repo / ".openCodeMemory", Path(env["OCM_HOME"])], [value]) == []
    assert [p.name for p in h.sessions(repo)][0].endswith("rotate-key.md")
    only = h.ocm_here(["checkpoint", "--tool", "codex", "--slug", value, "--goal", "x"], env, repo)
    assert only.returncode == 1 and value not in only.stderr
