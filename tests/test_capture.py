"""Capture (issue #12): sessions replayed from the real hosts' recorded payloads and
transcripts (`/work/shared/reference/hosts/`) leave a transcript note and a filled session
note; transcripts fold incrementally, are redacted, capped, opt-out; unknown formats are
logged and skipped; files dirty before the session are not credited to it."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402

from ocm.agents import claude_code, codex, gemini  # noqa: E402
from ocm.agents.dispatch import run  # noqa: E402
from ocm.vault import transcripts as vt  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402
from ocm.vault.sessions import SessionNote  # noqa: E402
from tests.conftest import git  # noqa: E402

REFERENCE = Path(os.environ.get("OCM_HOSTS_REFERENCE", "/work/shared/reference/hosts"))
FIXTURES = Path(__file__).parent / "fixtures" / "capture"
pytestmark = pytest.mark.skipif(not FIXTURES.is_dir(), reason="capture fixtures missing")

HOSTS = {
    "claude-code": "8dd515cb-48af-4af7-ad88-d6e4db65c3fe.jsonl",
    "codex": "rollout-2026-11-23T13-13-20-01a2088a-218f-74a3-89d0-889cf688877a.jsonl",
    "gemini": "session-2026-11-23T13-11-16c090fe.jsonl",
}
STOPS = {"stop", "after-agent"}


def _rewrite(text: str, repo: Path, home: Path) -> str:
    return text.replace("/home/dev/shop", str(repo)).replace("/home/dev", str(home))


def _payloads(host: str, repo: Path, home: Path) -> list[tuple[str, bytes]]:
    out = []
    for path in sorted((FIXTURES / "payloads" / host).glob("*.json")):
        event = path.stem.split("-", 1)[1]
        out.append((event, _rewrite(path.read_text(), repo, home).encode()))
    return out


def _note(path: Path) -> SessionNote:
    return SessionNote(Document.parse(path.read_text()))


def _transcripts(repo: Path) -> list[Path]:
    return sorted((repo / ".openCodeMemory" / "transcripts").glob("*.md"))


def _recorded_lines(host: str, repo: Path, home: Path) -> list[str]:
    source = FIXTURES / "transcripts" / host / HOSTS[host]
    return _rewrite(source.read_text(), repo, home).splitlines(keepends=True)


def replay(host: str, repo: Path, env: dict[str, str], home: Path,
           lines: list[str] | None = None) -> Path:
    """Every recorded hook of `host` in order, its transcript written as the host did:
    the lines up to the user's prompt before the prompt hook, the rest (or `lines`)
    before Stop."""
    events = _payloads(host, repo, home)
    target = Path(json.loads(events[0][1])["transcript_path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = lines or _recorded_lines(host, repo, home)
    target.write_text("".join(lines[:3]))
    for event, raw in events:
        if event in STOPS:
            target.write_text("".join(lines))
        if event in ("post-tool-use", "after-tool"):
            data = json.loads(raw)
            for path in h_paths(data):
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text("x = 1\n")
        run([host, event], raw, env)
    return target


def h_paths(data: dict) -> list[str]:
    tool_input = data.get("tool_input") or {}
    if isinstance(tool_input, dict) and isinstance(tool_input.get("file_path"), str):
        return [tool_input["file_path"]]
    patch = tool_input.get("command") if isinstance(tool_input, dict) else ""
    if isinstance(patch, str) and "*** Add File: " in patch:
        return [str(Path(data["cwd"]) / patch.split("*** Add File: ")[1].split("\n")[0])]
    return []


@pytest.fixture
def world() -> Iterator[tuple[Path, dict[str, str], Path]]:
    # Replayed tool output is cut at a fixed length after the recorded paths are rewritten to
    # the repo's: a short root, not pytest's tmp_path (longer under an xdist worker, and with
    # the test's name), keeps the error text the tests look for inside the cut.
    root = Path(tempfile.mkdtemp(prefix="cap-"))
    try:
        home = root / "home"
        env = h.clean_env(root / "ocm-home", HOME=str(home))
        repo = h.make_repo(root / "shop")
        h.init_vault(repo, env)
        yield repo, env, home
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_recorded_session_leaves_transcript_and_filled_session_note(
        host: str, world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    replay(host, repo, env, home)
    [session] = h.sessions(repo)
    [transcript] = _transcripts(repo)
    note = _note(session)
    text = transcript.read_text()
    # Linked both ways.
    assert note.fm["transcript"] == f"[[{transcript.stem}]]"
    assert f'session: "[[{session.stem}]]"' in text
    # One turn, the user's words (never ocm's own brief), tool lines with statuses.
    assert text.count("\n## Turn ") == 1
    assert "create from" in text or "create src/from" in text
    assert "Project memory (ocm)" not in text and "hook_context" not in text
    assert "AGENTS.md instructions" not in text and "session_context" not in text
    assert "**Assistant:** Done (mock)." in text
    assert "→ exit 2: " in text and "No such file or directory" in text
    assert "→ ok" in text
    assert "print('ok')" not in text and "Y = 2" not in text  # no file contents
    # The session note: closed, filled without a checkpoint.
    assert note.status == "closed"
    assert note.fm.get("summary") == "auto"
    assert note.goal.startswith("create ")
    assert "hook_context" not in note.goal and "Project memory" not in note.goal
    assert note.items("work done") == ["Done (mock)."]
    assert note.items("prompts") and "hook_context" not in note.items("prompts")[0]
    assert note.files()  # from the hooks
    # Searchable: the transcript note is indexed as its own kind.
    found = json.loads(h.ocm_here(["search", "check", "--kind", "transcript", "--json"], env,
                             repo).stdout)
    assert [hit["id"] for hit in found] == [f"{note.id}_transcript"]


def test_gemini_before_agent_brief_is_not_the_prompt(
        world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    events = dict(_payloads("gemini", repo, home))
    run(["gemini", "session-start"], events["session-start"], env)
    run(["gemini", "before-agent"], events["before-agent"], env)
    h.fold(repo)
    [session] = h.sessions(repo)
    assert _note(session).items("prompts") == [
        "create from_gemini.py, run the check, fix it, remember the gotcha"]


def test_incremental_fold_reads_only_new_bytes(world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    target = replay("claude-code", repo, env, home)
    [transcript] = _transcripts(repo)
    first = transcript.read_text()
    offset = vt.read_offset(transcript)[0]
    assert offset == target.stat().st_size
    stop = dict(_payloads("claude-code", repo, home))["stop"]
    # A second turn appended (plus half a line still being written).
    turn = [
        {"type": "user", "timestamp": "2026-11-23T13:20:00.000Z",
         "message": {"role": "user", "content": "now explain the retry budget please"}},
        {"type": "assistant", "timestamp": "2026-11-23T13:20:01.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": "SECRET THOUGHTS"},
             {"type": "text", "text": "The retry budget is 3 attempts. "
                                      "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"}]}},
    ]
    with target.open("a") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in turn) + '{"type": "user", "mes')
    run(["claude-code", "stop"], stop, env)
    text = transcript.read_text()
    assert text.split("\n---\n", 1)[1].startswith(first.split("\n---\n", 1)[1])
    assert text.count("\n## Turn ") == 2 and "## Turn 2 · 13:20 · now explain the retry" in text
    assert "SECRET THOUGHTS" not in text
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in text and "[REDACTED:" in text
    assert vt.read_offset(transcript)[0] == target.stat().st_size - len('{"type": "user", "mes')
    # Nothing new: the same note, byte for byte.
    before = transcript.read_bytes()
    run(["claude-code", "stop"], stop, env)
    assert transcript.read_bytes() == before
    # Work Done: one bullet per turn, the second from the transcript (redacted).
    [session] = h.sessions(repo)
    done = _note(session).items("work done")
    assert done[0] == "Done (mock)." and len(done) == 2
    assert done[1].startswith("The retry budget is 3 attempts.")
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in done[1] and "[REDACTED:" in done[1]


def _two_turns(host: str, repo: Path, home: Path) -> list[str]:
    """The recorded transcript with its turn played twice, the first answering
    'Wrote the first draft.' (Gemini keys messages by id: the copy gets its own ids)."""
    lines = _recorded_lines(host, repo, home)
    start = 2 if host == "gemini" else 3  # where the user's prompt is
    first = [line.replace("Done (mock).", "Wrote the first draft.").replace('"id":"', '"id":"t1-')
             for line in lines[start:]]
    return lines[:start] + first + lines[start:]


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_work_done_has_a_bullet_per_turn_without_a_stop_per_turn(
        host: str, world: tuple[Path, dict[str, str], Path]) -> None:
    """The first turn never had a Stop of its own (interrupted, or the host skipped it):
    its last assistant message still becomes a Work Done bullet, in turn order."""
    repo, env, home = world
    replay(host, repo, env, home, _two_turns(host, repo, home))
    [transcript] = _transcripts(repo)
    assert transcript.read_text().count("\n## Turn ") == 2
    note = _note(h.sessions(repo)[0])
    assert note.fm["summary"] == "auto"
    assert note.items("work done") == ["Wrote the first draft.", "Done (mock)."]


def test_checkpoint_then_more_turns_keeps_adding_work_done(
        world: tuple[Path, dict[str, str], Path]) -> None:
    """Issue #24: the turns after an agent's checkpoint are work done too (the note was
    frozen at the checkpoint, and a failure after it lived only in the transcript); the
    checkpoint's own content stays the agent's (no `summary: auto` mark comes back)."""
    repo, env, home = world
    events = dict(_payloads("claude-code", repo, home))
    lines = _two_turns("claude-code", repo, home)
    target = Path(json.loads(events["session-start"])["transcript_path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines[: 3 + (len(lines) - 3) // 2]))  # the first turn
    for event in ("session-start", "user-prompt-submit", "stop"):
        run(["claude-code", event], events[event], env)
    assert _note(h.sessions(repo)[0]).items("work done") == ["Wrote the first draft."]
    sid = json.loads(events["stop"])["session_id"]
    done = h.ocm_here(["checkpoint", "--session", sid, "--done", "Wrote the check"], env, repo)
    assert done.returncode == 0, done.stderr
    target.write_text("".join(lines))  # the second turn
    run(["claude-code", "stop"], events["stop"], env)
    note = _note(h.sessions(repo)[0])
    assert "summary" not in note.fm and note.items("work done") == ["Done (mock)."]
    assert note.items("work completed") == ["Wrote the check"]
    assert _transcripts(repo)[0].read_text().count("\n## Turn ") == 2  # still folded


def test_work_done_is_capped_with_a_pointer_to_the_transcript() -> None:
    from ocm.vault import autosummary

    note = SessionNote(Document.parse("---\nid: s1\n---\n\n## Prompts\n- build it\n"))
    messages = [f"Finished step {i}." for i in range(autosummary.MAX_WORK_DONE + 5)]
    assert autosummary.fill(note, messages)
    done = note.items("work done")
    assert len(done) == autosummary.MAX_WORK_DONE + 1
    assert done[-1] == autosummary.MORE_IN_TRANSCRIPT and done[0] == "Finished step 0."
    assert not autosummary.fill(note, ["One more step."])  # full: nothing added
    assert note.items("work done") == done


def test_opt_out_env_and_config(world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    replay("codex", repo, {**env, "OCM_TRANSCRIPTS": "0"}, home)
    assert _transcripts(repo) == []
    [session] = h.sessions(repo)
    assert _note(session).items("work done") == ["Done (mock)."]  # still filled
    assert "transcript" not in _note(session).fm
    (repo / ".openCodeMemory" / "config.json").write_text('{"transcripts": false}')
    for path in h.sessions(repo):
        path.unlink()
    replay("claude-code", repo, env, home)
    assert _transcripts(repo) == []


def test_unknown_format_is_logged_and_skipped(world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    events = _payloads("claude-code", repo, home)
    target = Path(json.loads(events[0][1])["transcript_path"])
    target.parent.mkdir(parents=True)
    target.write_text('{"kind": "something new", "v": 9}\nnot json at all\n')
    for event, raw in events:
        out = run(["claude-code", event], raw, env)
        assert isinstance(out, str)
    [transcript] = _transcripts(repo)
    assert "## Turn" not in transcript.read_text()
    log = (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()
    assert "no record in a known format" in log
    [session] = h.sessions(repo)
    assert _note(session).status == "closed"


def test_checkpoint_replaces_auto_parts(world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    events = dict(_payloads("codex", repo, home))
    for event in ("session-start", "user-prompt-submit", "stop"):
        run(["codex", event], events[event], env)
    [session] = h.sessions(repo)
    assert _note(session).fm["summary"] == "auto" and _note(session).goal
    sid = json.loads(events["stop"])["session_id"]
    done = h.ocm_here(["checkpoint", "--session", sid, "--done", "Wrote the check",
                  "--pending", "Ship it"], env, repo)
    assert done.returncode == 0, done.stderr
    note = _note(h.sessions(repo)[0])
    assert "summary" not in note.fm and note.goal == "" and note.items("work done") == []
    assert note.items("work completed") == ["Wrote the check"]
    run(["codex", "stop"], events["stop"].replace(b"Done (mock).", b"Second answer."), env)
    note = _note(h.sessions(repo)[0])
    # The agent's now (no auto mark, its goal kept), and the turn after it is work done.
    assert "summary" not in note.fm and note.items("work done") == ["Second answer."]


def test_git_fallback_skips_files_dirty_before_the_session(
        world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    (repo / "old_parser.py").write_text("x = 2\n")          # dirty before the session
    (repo / "scratch.txt").write_text("mine\n")             # untracked before it
    assert "old_parser.py" in git(repo, "status", "--porcelain")
    events = dict(_payloads("claude-code", repo, home))
    run(["claude-code", "session-start"], events["session-start"], env)
    (repo / "made_by_session.py").write_text("y = 1\n")     # written by a shell command
    (repo / "scratch.txt").write_text("changed in the session\n")
    run(["claude-code", "session-end"], events["session-end"], env)
    note = _note(h.sessions(repo)[0])
    assert note.files() == {"made_by_session.py": "created", "scratch.txt": "created"}
    assert not list((repo / ".openCodeMemory" / ".hooks" / "snapshots").glob("*.json"))


def test_caps_say_what_was_cut(tmp_path: Path) -> None:
    turn = vt.Turn(prompt="p " * 3000, time="2026-11-23T10:00:00Z",
                   texts=["word " * 2000],
                   tools=[vt.ToolCall("Bash", f"cmd {i}", 0) for i in range(vt.MAX_TOOL_LINES + 5)])
    text = vt.render_turn(1, turn)
    assert "*(cut: " in text and "more characters)*" in text
    assert "*(cut: 5 more tool calls)*" in text
    big = [vt.Turn(prompt=f"turn {i}", texts=["z " * 1900]) for i in range(200)]
    root = tmp_path / "vault"
    source = tmp_path / "t.jsonl"
    source.write_text("{}\n")
    result = vt.fold(root, "s1", "s1", "claude-code", "x", str(source), lambda lines: (big, 1))
    assert result is not None
    text = result.path.read_text()
    fm = Document.parse(text).frontmatter.data
    assert fm["cut_turns"] > 0 and fm["turns"] + fm["cut_turns"] == 200
    assert "note cap reached" in text and len(text) < vt.MAX_NOTE_CHARS + 20_000


def test_parsers_read_every_recorded_transcript() -> None:
    for module, folder in ((claude_code, "claude-code"), (codex, "codex"), (gemini, "gemini")):
        for path in sorted((FIXTURES / "transcripts" / folder).glob("*.jsonl")):
            turns, known = module.parse_transcript(path.read_bytes().splitlines(), "/home/dev/shop")
            assert known > 0 and turns, path.name
            assert all(t.prompt and "<hook_context>" not in t.prompt for t in turns), path.name
            assert all(t.last_text for t in turns), path.name


def test_fixtures_match_the_reference_recordings() -> None:
    if not REFERENCE.is_dir():
        pytest.skip("reference recordings not on this machine")
    for host in HOSTS:
        for folder in ("payloads", "transcripts"):
            for path in (FIXTURES / folder / host).iterdir():
                assert path.read_bytes() == (REFERENCE / folder / host / path.name).read_bytes()



def test_retrieval_bench_scores_turn_anchors(tmp_path: Path) -> None:
    """bench/retrieval_transcript.py on a tiny set: the evidence turn is found by anchor."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
    import retrieval_transcript as bench

    docs = [
        {"id": "c/D1:1", "text": "Ann: I adopted a grey cat named Pepper", "group": "c",
         "date": "2023-05-08T13:56:00", "meta": {"session": 1}},
        {"id": "c/D1:2", "text": "Bob: my sister plays the violin", "group": "c",
         "date": "2023-05-08T13:57:00", "meta": {"session": 1}},
        {"id": "c/D2:1", "text": "Ann: we hiked the Alps in June", "group": "c",
         "date": "2023-06-08T10:00:00", "meta": {"session": 2}},
    ]
    for doc in docs:  # long enough for a note to be split into its sections
        doc["text"] += ". " + " ".join(f"word{i}" for i in range(40))
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "queries.jsonl").write_text(json.dumps(
        {"id": "c/q1", "text": "What instrument does Bob's sister play?", "group": "c"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("c/q1\tc/D1:2\t1\n")
    result = bench.run_set(tmp_path, chunks=True)
    assert result["queries"] == 1
    assert result["turn"]["ndcg@10"] == 1.0 and result["turn_chunks"]["recall@1"] == 1.0
    assert result["session"]["recall@1"] == 1.0


def test_session_rename_relinks_its_transcript(world: tuple[Path, dict[str, str], Path]) -> None:
    repo, env, home = world
    replay("codex", repo, env, home)
    [transcript] = _transcripts(repo)
    sid = json.loads(dict(_payloads("codex", repo, home))["stop"])["session_id"]
    named = h.ocm_here(["checkpoint", "--session", sid, "--slug", "codex-check-fix",
                   "--goal", "Make the check pass"], env, repo)
    assert named.returncode == 0, named.stderr
    [session] = h.sessions(repo)
    assert session.stem.endswith("_codex-check-fix")
    assert f'session: "[[{session.stem}]]"' in transcript.read_text()
    assert _note(session).fm["transcript"] == f"[[{transcript.stem}]]"
