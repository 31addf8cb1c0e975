"""Stress test: `ocm` must never lose, duplicate, tear or leak what it was asked to keep.

Usage: python bench/stress.py [--json] [--writers 8] [--ops 200] [--kills 200]
                              [--seed N] [--keep DIR]

Seven parts, each on its own temp git repo and private `OCM_HOME`:

* writers  - N real processes (`python bench/stress.py _worker CONFIG`) x M mixed operations
  on one vault: checkpoints appending bullets to a shared and an own session, remembers,
  keyed supersedes (racing on shared keys), resolves (and a second resolve, which must be
  refused), Claude Code PostToolUse hooks through the real `ocm-hook` script, searches for
  what was just written, and a person's edit (a note rewritten by an "editor" with an extra
  section). Every op logs what it intended to a per-worker JSON-lines file; the checker
  parses the Markdown back and counts every token that is missing (`lost`) or present more
  than once (`duplicated`), checks every supersede chain, and compares the index with the
  files and with a clean rebuild (`index_mismatches`).
* session race - N processes send their first checkpoint for one new host session id at
  the same instant: one session note must hold every item.
* kills    - writers (every fifth one running full index rebuilds instead) SIGKILLed at
  random moments, four at a time, K in all: every `.md` must still parse (`torn_files`), no
  note may vanish, no temp file may be listed as a note, and a fresh `Project` must search
  fine and hold exactly what a clean rebuild holds (every stored document, the raw matches
  of probe words, the listings).
* damage   - `.index/` deleted, truncated, scrambled, replaced by a file: every CLI read
  exits 0 with at most a one-line notice and the same answers as a clean rebuild.
* bad input - >= 40 refused inputs through the CLI, the hook entry point and the MCP tools:
  each must fail with a clear error (hooks: exit 0, a logged no-op) and leave the vault
  byte-for-byte unchanged (`bad_input_changes`).
* secrets  - >= 15 kinds of secrets in checkpoint fields, memories, prompts and file paths:
  none may reach any file under the vault, index included (`secrets_leaked`), and the text
  around them must be intact.
* isolation - project-scope search never shows another project's notes (only `--scope
  global` does), and project notes never land in the user vault.

`--json` prints the figures: `writers`, `operations`, `lost`, `duplicated`, `torn_files`,
`kill_trials`, `index_mismatches`, `bad_inputs`, `bad_input_changes`, `secrets_leaked`, plus
`chain_errors` (broken supersede chains or resolves), `failed_ops` (operations that raised),
`stray_temp_files` (dot-prefixed temp files killed writers left; informational),
`supersedes_finished` (keyed supersedes a kill cut between their two writes, which the next
write with that key finishes; informational),
`problems` (the first 20 findings) and `seconds`. The exit status is 1 if a loss, leak or
mismatch figure is non-zero or any problem was found.

The pytest suite (`tests/test_stress_*.py`, `tests/test_bad_input*.py`,
`tests/test_secrets*.py`, `tests/test_isolation*.py`) runs the same code scaled down, with
CLI and hook calls in-process (`IN_PROCESS`); the writers stay separate processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BIN = Path(sys.executable).parent
OCM = str(BIN / "ocm")
OCM_HOOK = str(BIN / "ocm-hook")
VAULT = ".openCodeMemory"
MEMORY_TYPES = ("gotcha", "decision", "bug_fix", "lesson", "discovery", "procedure")
SHARED_KEYS = ("db.pool-size", "cache.ttl", "queue.backend")
# relative weights of the writer operations
OP_WEIGHTS = {
    "cp_shared": 5, "cp_own": 4, "remember": 4, "supersede": 3, "resolve": 2, "hook_edit": 3,
    "person_edit": 2, "search": 2,
}


# --------------------------------------------------------------------------- helpers


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "dev@example.com")
    git("config", "user.name", "Dev")
    (path / "README.md").write_text("# demo\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "init")
    return path


def child_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OCM_VAULT", "OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "OCM_NOW")}
    env.update(OCM_HOME=str(home), PYTHONPATH=str(ROOT), **extra)
    return env


@contextlib.contextmanager
def ocm_home(home: Path) -> Iterator[None]:
    """Point this process's `OCM_HOME` at `home` for the duration."""
    old = {k: os.environ.get(k) for k in ("OCM_HOME", "OCM_VAULT", "OCM_PROJECT_DIR",
                                           "CLAUDE_PROJECT_DIR")}
    os.environ["OCM_HOME"] = str(home)
    for name in ("OCM_VAULT", "OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR"):
        os.environ.pop(name, None)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def token(rng: random.Random, tag: str) -> str:
    """A unique, searchable word: letters only so every analyzer keeps it whole."""
    return tag + "".join(rng.choice(string.ascii_lowercase) for _ in range(12))


def note_texts(vault: Path) -> dict[str, str]:
    """relpath -> text of every `.md` under sessions/ and memories/ (dot-files included)."""
    out = {}
    for sub in ("sessions", "memories"):
        for path in sorted((vault / sub).rglob("*.md")):
            out[path.relative_to(vault).as_posix()] = path.read_bytes().decode("utf-8", "replace")
    return out


def all_file_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def snapshot(vault: Path, skip: tuple[str, ...] = (".index/", ".locks/")) -> dict[str, bytes]:
    """Every note-bearing file's bytes (the derived index and lock files left out)."""
    if not vault.exists():
        return {}
    return {rel: data for rel, data in all_file_bytes(vault).items() if not rel.startswith(skip)}


# The pytest suite sets this: CLI and hook calls then run in this process (click's runner,
# the hook dispatcher) instead of a fresh interpreter each, same code, ~20x faster.
IN_PROCESS = False


@contextlib.contextmanager
def _inside(repo: Path, home: Path) -> Iterator[None]:
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        with ocm_home(home):
            yield
    finally:
        os.chdir(cwd)


def run_cli(args: list[str], repo: Path, home: Path, stdin: str | bytes | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    if IN_PROCESS:
        from click.testing import CliRunner

        from ocm.cli.main import cli

        with _inside(repo, home):
            result = CliRunner().invoke(cli, args, input=data, prog_name="ocm")
        return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes,
                                           result.stderr_bytes or b"")
    return subprocess.run([OCM, *args], cwd=repo, env=child_env(home), input=data,
                          capture_output=True, timeout=timeout)


def run_hook(args: list[str], payload: bytes, repo: Path, home: Path,
             timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    if IN_PROCESS:
        from ocm.agents.dispatch import MAX_PAYLOAD_BYTES
        from ocm.hook import run

        with _inside(repo, home), contextlib.ExitStack() as stack:
            import io

            fake = io.TextIOWrapper(io.BytesIO(payload[:MAX_PAYLOAD_BYTES + 1]))
            stack.callback(setattr, sys, "stdin", sys.stdin)
            sys.stdin = fake
            out = run(args)
        return subprocess.CompletedProcess(args, 0, (out + "\n" if out else "").encode(), b"")
    return subprocess.run([OCM_HOOK, *args], cwd=repo, env=child_env(home), input=payload,
                          capture_output=True, timeout=timeout)


def post_tool_use(repo: Path, session_id: str, file_path: str, tool: str = "Write") -> bytes:
    """A Claude Code PostToolUse payload (integrations.md section 1.4)."""
    tool_input: dict[str, Any] = {"file_path": file_path}
    if tool == "Write":
        tool_input["content"] = "print('hi')\n"
    else:
        tool_input.update(old_string="a", new_string="b")
    return json.dumps({
        "session_id": session_id, "transcript_path": str(repo / ".t.jsonl"), "cwd": str(repo),
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": tool,
        "tool_input": tool_input, "tool_response": {"filePath": file_path, "success": True},
        "tool_use_id": "toolu_01ABC", "duration_ms": 12,
    }).encode()


def prompt_submit(repo: Path, session_id: str, prompt: str) -> bytes:
    return json.dumps({
        "session_id": session_id, "transcript_path": str(repo / ".t.jsonl"), "cwd": str(repo),
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    }).encode()


def hit_ids(hits: list[Any]) -> list[str]:
    return [h.id for h in hits]


def raw_matches(project: Any, words: list[str]) -> dict[str, list[str]]:
    """relpaths of every indexed note matching each word in any searched field, with no
    relevance threshold: what the index holds, independent of corpus statistics."""
    from ocm.indexer.search import text_query

    searcher = project.refresh(project.vault).searcher()
    out = {}
    for word in words:
        query, _ = text_query(word)
        out[word] = [] if query is None else sorted(
            r["path"] for r in searcher.search(query, limit=None))
    return out


def probe_answers(project: Any, words: list[str]) -> dict[str, Any]:
    """What the index answers: every stored document, raw matches for `words`, the memory
    and session listings, and one ranked search per word (which must not fail)."""
    from ocm.project import SearchRequest

    out: dict[str, Any] = {}
    for word in words:
        project.search(SearchRequest(query=word, limit=20, include_resolved=True))
    for name, listed in (("memories", project.list_memories(status=None, limit=100)),
                         ("sessions", project.list_sessions(limit=100))):
        # a full page is cut among notes of the same second in no defined order
        out[name] = sorted(hit_ids(listed)) if len(listed) < 100 else len(listed)
    for word, paths in raw_matches(project, words).items():
        out[f"match:{word}"] = paths
    searcher = project.refresh(project.vault).searcher()
    for fields in searcher.all_stored_fields():
        out[f"doc:{fields['path']}"] = json.dumps(fields, sort_keys=True, default=str)
    return out


def clean_answers(vault: Path, repo: Path, home: Path, words: list[str]) -> dict[str, Any]:
    """The same reads on a copy of the vault whose index was rebuilt from scratch."""
    from ocm.project import Project

    with tempfile.TemporaryDirectory(prefix="ocm-clean-") as tmp:
        copy = Path(tmp) / VAULT
        # copy2 keeps mtime_ns, so stored signatures compare equal
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".index", ".locks"))
        with ocm_home(home):
            project = Project(copy, repo)
            project.rebuild_index()
            return probe_answers(project, words)


def index_vs_files(project: Any) -> int:
    """Notes whose indexed signature differs from the file's (or that one side lacks)."""
    index = project.refresh(project.vault)
    stored: dict[str, list[int]] = {}
    with index._open().searcher() as searcher:  # noqa: SLF001 - a checker may look inside
        for fields in searcher.all_stored_fields():
            stored[fields["path"]] = list(fields.get("sig") or [])
    files = {rel: list(sig) for rel, sig in project.vault.note_signatures().items()
             if rel not in index.broken}
    keys = set(stored) | set(files)
    return sum(1 for rel in keys if stored.get(rel) != files.get(rel))


# --------------------------------------------------------------------------- worker process


@dataclass
class Log:
    path: Path
    handle: Any = None

    def __post_init__(self) -> None:
        self.handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long

    def write(self, **record: Any) -> None:
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()


def person_targets(vault: Path) -> list[Path]:
    """The memory notes a person may open. Not dot-files: `rglob("*.md")` also lists a
    writer's `.ocm-tmp-<pid>-<hex>-<note>.md` while it exists, and a "person" who edited that
    made the writer fail (a FileNotFoundError naming the temp file once it was renamed)."""
    return sorted(p for p in (vault / "memories").rglob("*.md") if not p.name.startswith("."))


def _person_edit(path: Path, line: str, lock_path: Path) -> bool:
    """A person saves `path` from an editor with one extra section at the end.

    The editor saves atomically (temp file + rename) and refuses to save over a file that
    changed on disk since it was opened (as VS Code and Obsidian do), re-opening it instead.
    People take turns (`lock_path`), because two editors racing is not ocm's business.
    """
    import fcntl

    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(50):
            try:
                before = path.stat()
                text = path.read_bytes().decode("utf-8")
            except FileNotFoundError:
                return False
            newline = "\r\n" if "\r\n" in text else "\n"
            addition = f"{newline}## Reviewer Note{newline}{newline}{line}{newline}"
            tmp = path.with_name(f".person-{os.getpid()}.tmp")
            tmp.write_bytes((text.rstrip("\r\n") + newline + addition).encode("utf-8"))
            now = path.stat()
            if (now.st_mtime_ns, now.st_size, now.st_ino) != (
                    before.st_mtime_ns, before.st_size, before.st_ino):
                tmp.unlink()
                time.sleep(0.005)
                continue
            os.replace(tmp, path)
            return True
    return False


def worker_main(config_path: str) -> None:
    cfg = json.loads(Path(config_path).read_text())
    os.environ["OCM_HOME"] = cfg["home"]
    from ocm.project import Project, SearchRequest
    from ocm.vault.errors import OcmError
    from ocm.vault.sessions import CheckpointInput

    repo = Path(cfg["repo"])
    project = Project.open(cwd=repo)
    rng = random.Random(cfg["seed"])
    log = Log(Path(cfg["result"]))
    w = cfg["worker"]
    own_agent = f"agent-w{w}"
    shared = cfg["shared_session"]
    mode = cfg.get("mode", "writers")
    if mode == "race":  # every worker's first checkpoint names one new host session
        while time.time() < cfg["start_at"]:
            pass
        tok = token(rng, "race")
        project.checkpoint(CheckpointInput(work_completed=[f"first {tok}"]),
                           session_id=cfg["shared_session"], tool="claude-code")
        log.write(op="race", tok=tok, ok=True)
        return
    if mode == "rebuild":
        print("ready", flush=True)
        while True:
            project.rebuild_index()
            Project.open(cwd=repo).search("alpha")
    # The worker's own session exists before any hook names it.
    own = project.checkpoint(CheckpointInput(goal=f"Worker {w} session."),
                             session_id=own_agent, tool="claude-code").id
    log.write(op="own_session", id=own, agent=own_agent, ok=True)
    if mode == "crash":
        print("ready", flush=True)
    ops, weights = zip(*OP_WEIGHTS.items(), strict=True)
    mine: list[dict[str, Any]] = []  # memories this worker wrote
    n = cfg["ops"] if mode == "writers" else 10**9
    for i in range(n):
        op = rng.choices(ops, weights)[0]
        tok = token(rng, "tk")
        try:
            if op in ("cp_shared", "cp_own"):
                sid = shared if op == "cp_shared" else own
                section = rng.choice(("work completed", "work done", "architecture decisions"))
                item = {"work completed": f"done {tok}", "work done": f"summary {tok}",
                        "architecture decisions": f"**Choice {tok}:** because"}[section]
                fields = {"work completed": "work_completed", "work done": "work_summary",
                          "architecture decisions": "decisions"}[section]
                log.write(op=op, phase="start", tok=tok)
                project.checkpoint(CheckpointInput(**{fields: [item]}), session_id=sid)
                log.write(op=op, tok=tok, session=sid, section=section, ok=True)
            elif op == "remember":
                mtype = rng.choice(MEMORY_TYPES)
                log.write(op=op, phase="start", tok=tok)
                res = project.remember(f"Fact {tok} about the build.", mtype,
                                       title=f"Fact {w}-{i}", files=[f"src/m{w}_{i}.py"])
                mine.append({"id": res.id, "tok": tok})
                log.write(op=op, tok=tok, id=res.id, type=mtype, ok=True)
            elif op == "supersede":
                key = rng.choice((*SHARED_KEYS, f"own.key-{w}"))
                reason = token(rng, "why")
                log.write(op=op, phase="start", tok=tok)
                res = project.remember(f"Setting {tok} for {key}.", "decision",
                                       title=f"Setting {w}-{i}", key=key,
                                       supersede_reason=f"changed {reason}")
                log.write(op=op, tok=tok, reason=reason, key=key, id=res.id, ok=True)
            elif op == "resolve":
                res = project.remember(f"Issue {tok} seen.", "gotcha", title=f"Issue {w}-{i}")
                project.set_memory_status(res.id, "resolved", reason=f"fixed {w}-{i}")
                again = project.set_memory_status(res.id, "resolved")  # idempotent
                log.write(op=op, tok=tok, id=res.id, ok=True, second_noop=not again.changed)
            elif op == "hook_edit":
                rel = f"src/w{w}/f{i}_{tok}.py"
                done = run_hook(["claude-code", "post-tool-use"],
                                post_tool_use(repo, own_agent, str(repo / rel),
                                              rng.choice(("Write", "Edit"))),
                                repo, Path(cfg["home"]))
                log.write(op=op, tok=tok, rel=rel, agent=own_agent, session=own,
                          ok=done.returncode == 0 and not done.stdout.strip())
            elif op == "person_edit":
                targets = person_targets(repo / VAULT)
                target = rng.choice([repo / VAULT / "sessions" / f"{shared}.md", *targets[:40]])
                ok = _person_edit(target, f"person {tok}", Path(cfg["person_lock"]))
                log.write(op=op, tok=tok, rel=target.relative_to(repo / VAULT).as_posix(),
                          ok=ok)
            elif op == "search" and not mine:
                log.write(op=op, tok=None, ok=True, found=True, skipped=True)
            elif op == "search":
                pick = rng.choice(mine)
                hits = project.search(SearchRequest(query=pick["tok"], limit=5,
                                                    include_resolved=True))
                log.write(op=op, tok=None, want=pick["id"], ok=True,
                          found=pick["id"] in hit_ids(hits))
        except OcmError as exc:
            log.write(op=op, tok=tok, ok=False, error=f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------- part 1: writers


@dataclass
class Report:
    writers: int = 0
    operations: int = 0
    lost: int = 0
    duplicated: int = 0
    torn_files: int = 0
    kill_trials: int = 0
    index_mismatches: int = 0
    bad_inputs: int = 0
    bad_input_changes: int = 0
    secrets_leaked: int = 0
    chain_errors: int = 0
    failed_ops: int = 0
    stray_temp_files: int = 0  # left by killed writers: dot-files, never read as notes
    supersedes_finished: int = 0  # keyed supersedes a kill cut in half, finished by a write
    problems: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "problems"}
        out["problems"] = self.problems[:20]
        return out


def _spawn_worker(cfg: dict[str, Any], tmp: Path, name: str, **popen: Any) -> subprocess.Popen:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(cfg))
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "_worker", str(path)],
                            env=child_env(Path(cfg["home"])), **popen)


def run_writers(base: Path, writers: int, ops: int, seed: int, report: Report) -> None:
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    repo = make_repo(base / "writers")
    home = base / "writers-home"
    with ocm_home(home):
        project = Project.open(cwd=repo)
        project.init()
        shared = project.checkpoint(CheckpointInput(goal="Shared session for every writer."),
                                    tool="claude-code").id
    results = base / "writer-results"
    results.mkdir()
    procs = []
    for w in range(writers):
        cfg = {"home": str(home), "repo": str(repo), "worker": w, "seed": seed * 1000 + w,
               "ops": ops, "result": str(results / f"w{w}.jsonl"), "shared_session": shared,
               "person_lock": str(base / "person.lock")}
        procs.append(_spawn_worker(cfg, base, f"writer{w}", stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=1800)
        if proc.returncode != 0:
            report.problems.append(f"writer exited {proc.returncode}: {err.decode()[-400:]}")
    report.writers += writers
    records = []
    for path in sorted(results.glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    check_writers(repo, home, records, report)


def run_session_race(base: Path, writers: int, seed: int, report: Report) -> None:
    """`writers` processes send their first checkpoint for one new host session id at the
    same instant: one session note must hold every item."""
    from ocm.project import Project
    from ocm.vault.folder import read_document
    from ocm.vault.sessions import SessionNote

    repo = make_repo(base / "race")
    home = base / "race-home"
    with ocm_home(home):
        Project.open(cwd=repo).init()
    results = base / "race-results"
    results.mkdir()
    start_at = time.time() + 1.5 + 0.1 * writers
    procs = [_spawn_worker({"home": str(home), "repo": str(repo), "worker": w,
                            "seed": seed * 31 + w, "ops": 0, "mode": "race",
                            "start_at": start_at, "shared_session": "host-session-1",
                            "result": str(results / f"r{w}.jsonl"), "person_lock": ""},
                           base, f"race{w}", stderr=subprocess.PIPE) for w in range(writers)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            report.problems.append(f"race writer exited {proc.returncode}: {err[-300:]!r}")
    toks = [json.loads(line)["tok"] for path in results.glob("*.jsonl")
            for line in path.read_text().splitlines()]
    notes = [SessionNote(read_document(p)) for p in (repo / VAULT / "sessions").glob("*.md")]
    report.operations += len(toks)
    if len(notes) != 1:
        report.duplicated += len(notes) - 1
        report.problems.append(f"{len(notes)} session notes for one host session id")
    items = "\n".join(item for note in notes for item in note.items("work completed"))
    report.lost += sum(1 for tok in toks if tok not in items)


def check_writers(repo: Path, home: Path, records: list[dict[str, Any]], report: Report) -> None:
    from ocm.project import Project
    from ocm.vault.folder import read_document
    from ocm.vault.memories import MemoryNote
    from ocm.vault.sessions import SessionNote

    vault = repo / VAULT
    done = [r for r in records if r.get("phase") != "start" and r["op"] != "own_session"]
    report.operations += len(done)
    failed = [r for r in done if not r.get("ok")]
    report.failed_ops += len(failed)
    report.problems += [f"op failed: {r}" for r in failed[:5]]
    with ocm_home(home):
        project = Project.open(cwd=repo)
        project.fold_journal()  # what the next read does first
        texts = note_texts(vault)
        everything = "\n".join(texts.values())

        def count(tok: str) -> int:
            return everything.count(tok)

        sessions = {}
        for path in sorted((vault / "sessions").glob("*.md")):
            note = SessionNote(read_document(path))
            sessions[note.id] = note
        memories = {}
        for path in sorted((vault / "memories").rglob("*.md")):
            memo = MemoryNote(read_document(path))
            memories[memo.id] = memo
        # every token an op said it wrote is there exactly once, in the right place
        for r in done:
            tok, op = r.get("tok"), r["op"]
            if not r.get("ok") or not tok or op == "search":
                continue
            if op == "hook_edit":
                note = sessions.get(r["session"])
                hits = sum(1 for p in (note.files() if note else {}) if p == r["rel"])
                where = hits
            else:
                hits = count(tok)
                where = 1
                if op in ("cp_shared", "cp_own"):
                    note = sessions.get(r["session"])
                    items = note.items(r["section"]) if note else []
                    where = sum(1 for item in items if tok in item)
                elif op in ("remember", "supersede", "resolve"):
                    memo = memories.get(r["id"])
                    where = int(memo is not None and tok in memo.content)
                    if op == "resolve" and memo is not None and (
                            memo.status != "resolved" or not r.get("second_noop")):
                        report.chain_errors += 1
                        report.problems.append(f"resolve not kept: {r['id']} {memo.status}")
            if hits == 0 or where == 0:
                report.lost += 1
                report.problems.append(f"lost: {r}")
            elif hits > 1 or where > 1:
                report.duplicated += 1
                report.problems.append(f"duplicated ({hits}x): {r}")
        # supersede chains: per key one active record, a linear chain over every write
        by_key: dict[str, list[str]] = defaultdict(list)
        for r in done:
            if r["op"] == "supersede" and r.get("ok"):
                by_key[r["key"]].append(r["id"])
        for key, ids in by_key.items():
            report.chain_errors += _chain_errors(key, ids, memories, report.problems)
        # session files touched by hooks: one note per agent session
        agents = Counter(str(n.fm.get("agent_session_id")) for n in sessions.values()
                         if n.fm.get("agent_session_id"))
        for agent, n in agents.items():
            if n > 1:
                report.duplicated += n - 1
                report.problems.append(f"{n} session notes for agent session {agent}")
        # every .md parses
        report.torn_files += _torn(vault, report.problems)
        # searchable right after write, in another process, under load
        for r in done:
            if r["op"] == "search" and r.get("ok") and not r.get("found"):
                report.index_mismatches += 1
                report.problems.append(f"not found right after write: {r}")
        # the index agrees with the files and with a clean rebuild
        report.index_mismatches += index_vs_files(project)
        sample = [r["tok"] for r in done if r.get("ok") and r.get("tok") and r["op"] in (
            "cp_shared", "cp_own", "remember", "supersede", "resolve", "person_edit")]
        probes = _probe_sample(sample, 200)
        live = probe_answers(project, probes)
        for tok in probes:
            want = sorted(n for n, t in texts.items() if tok in t)
            if live[f"match:{tok}"] != want:
                report.index_mismatches += 1
                report.problems.append(f"index for {tok}: {live[f'match:{tok}']} but files "
                                       f"{want}")
    clean = clean_answers(vault, repo, home, probes)
    report.index_mismatches += _compare(live, clean, report.problems)


def _probe_sample(items: list[str], n: int) -> list[str]:
    step = max(1, len(items) // n)
    return items[::step][:n]


def _link_target(value: Any) -> str:
    """The note a linking property names (`id`, `"[[id]]"`, `[[id|alias]]`...)."""
    try:
        from ocm.vault.links import unlink
    except ImportError:  # before links existed: a bare id
        return "" if value is None else str(value).strip()
    return unlink(value)


def _chain_errors(key: str, ids: list[str], memories: dict[str, Any],
                  problems: list[str]) -> int:
    chain = {mid: m for mid, m in memories.items() if m.key == key}
    errors = 0
    if set(chain) != set(ids):
        problems.append(f"key {key}: files {sorted(chain)} vs writes {sorted(ids)}")
        errors += 1
    active = [m for m in chain.values() if m.status == "active"]
    if len(active) != 1:
        problems.append(f"key {key}: {len(active)} active records")
        return errors + 1
    # walk back from the active record: every record exactly once, links both ways
    seen, cur = [], active[0]
    while cur is not None:
        seen.append(cur.id)
        prev_id = _link_target(cur.fm.get("supersedes"))  # a bare id or an Obsidian [[link]]
        if not prev_id:
            break
        prev = chain.get(prev_id)
        if prev is None or prev.status != "superseded" or _link_target(
                prev.fm.get("superseded_by")) != cur.id:
            problems.append(f"key {key}: broken link {prev_id} -> {cur.id}")
            return errors + 1
        if prev.id in seen:
            problems.append(f"key {key}: cycle at {prev.id}")
            return errors + 1
        cur = prev
    if len(seen) != len(chain):
        problems.append(f"key {key}: chain covers {len(seen)} of {len(chain)} records")
        errors += 1
    return errors


def _torn(vault: Path, problems: list[str]) -> int:
    """`.md` files under the vault that are empty or do not parse; temp files listed as notes."""
    from ocm.vault.errors import OcmError
    from ocm.vault.folder import read_document
    from ocm.vault.store import Vault

    torn = 0
    for sub in ("sessions", "memories"):
        for path in (vault / sub).rglob("*.md"):
            if path.name.startswith("."):
                continue
            try:
                raw = path.read_bytes()
                doc = read_document(path)
                if not raw.strip() or not doc.frontmatter.data.get("id"):
                    raise ValueError("empty or without id")
            except (OcmError, ValueError) as exc:
                torn += 1
                problems.append(f"torn: {path.name}: {exc}")
    listed = Vault(vault).note_signatures()
    stray = [rel for rel in listed if any(part.startswith(".") for part in rel.split("/"))]
    if stray:
        problems.append(f"temp files listed as notes: {stray}")
    return torn + len(stray)


def _compare(live: dict[str, Any], clean: dict[str, Any],
             problems: list[str]) -> int:
    bad = [k for k in set(clean) | set(live) if live.get(k) != clean.get(k)]
    for k in bad[:5]:
        problems.append(f"{k}: live {live.get(k)} vs clean rebuild {clean[k]}")
    return len(bad)


# --------------------------------------------------------------------------- part 2: kills


def seed_vault(project: Any, rng: random.Random, notes: int) -> list[str]:
    """`notes` memories and a few sessions; returns probe words."""
    from ocm.vault.sessions import CheckpointInput

    words = ["alpha", "beta", "gamma", "delta", "kafka", "redis", "pool", "cache"]
    for i in range(notes):
        picked = rng.sample(words, 3)
        project.remember(f"Note {i} on {' '.join(picked)} {token(rng, 'sd')}.",
                         rng.choice(MEMORY_TYPES), title=f"Seed {i} {picked[0]}")
    for i in range(max(1, notes // 20)):
        project.checkpoint(CheckpointInput(goal=f"Seed session {i} about {words[i % 8]}.",
                                           work_completed=[f"step {i} {words[(i + 3) % 8]}"]),
                           session_id=f"seed-session-{i}", tool="claude-code")
    return words


def run_kills(base: Path, trials: int, seed: int, report: Report, seed_notes: int = 120,
              batch: int = 4) -> None:
    """`trials` SIGKILLs, `batch` processes at a time, each at its own random moment; every
    fifth process runs full index rebuilds instead of writes."""
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    rng = random.Random(seed)
    repo = make_repo(base / "kills")
    home = base / "kills-home"
    vault = repo / VAULT
    with ocm_home(home):
        project = Project.open(cwd=repo)
        project.init()
        words = seed_vault(project, rng, seed_notes)[:3]
        shared = project.checkpoint(CheckpointInput(goal="Shared kill session."),
                                    tool="claude-code").id
    results = base / "kill-results"
    results.mkdir()
    done = 0
    while done < trials:
        n = min(batch, trials - done)
        before = {rel for rel in note_texts(vault) if not rel.rsplit("/", 1)[-1].startswith(".")}
        procs = []
        for k in range(n):
            trial = done + k
            cfg = {"home": str(home), "repo": str(repo), "worker": 100 + trial,
                   "seed": seed * 7919 + trial, "ops": 0, "shared_session": shared,
                   "result": str(results / f"k{trial}.jsonl"),
                   "person_lock": str(base / "p.lock"),
                   "mode": "rebuild" if trial % 5 == 4 else "crash"}
            procs.append(_spawn_worker(cfg, base, f"killme{k}", stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL))
        for proc in procs:
            assert proc.stdout is not None
            proc.stdout.readline()  # "ready": imports done, writing from now on
        start = time.monotonic()
        for delay, proc in sorted(((rng.uniform(0.0, 0.5), p) for p in procs),
                                  key=lambda x: x[0]):
            time.sleep(max(0.0, start + delay - time.monotonic()))
            os.kill(proc.pid, signal.SIGKILL)
        for proc in procs:
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
        done += n
        report.kill_trials += n
        report.torn_files += _torn(vault, report.problems)
        after = {rel for rel in note_texts(vault) if not rel.rsplit("/", 1)[-1].startswith(".")}
        if before - after:
            report.lost += len(before - after)
            report.problems.append(f"kills {done}: notes vanished: {sorted(before - after)}")
        # the next command works, and answers like a clean rebuild
        with ocm_home(home):
            try:
                live = probe_answers(Project.open(cwd=repo), words)
            except Exception as exc:  # noqa: BLE001 - counted, not raised
                report.index_mismatches += 1
                report.problems.append(f"kills {done}: next command failed: {exc!r}")
                continue
        report.index_mismatches += _compare(live, clean_answers(vault, repo, home, words),
                                            report.problems)
    report.stray_temp_files += sum(1 for _ in vault.rglob(".ocm-tmp-*"))
    finish_half_supersedes(vault, repo, home, report)


def finish_half_supersedes(vault: Path, repo: Path, home: Path, report: Report) -> None:
    """A keyed supersede killed between its two writes leaves two active records until the
    next write with that key finishes it (`Vault.active_with_key`): do what that write
    does; then no key may still have two active records."""
    from ocm.vault import locks
    from ocm.vault.atomic import locked
    from ocm.vault.store import Vault

    half = _keys_with_several_active(vault, [])
    store = Vault(vault, "kills", repo)
    with ocm_home(home), locked(store.locks_dir, locks.MEMORIES):
        for key in half:
            store.active_with_key(key)
    report.supersedes_finished += len(half)
    report.chain_errors += len(_keys_with_several_active(vault, report.problems))


def _keys_with_several_active(vault: Path, problems: list[str]) -> list[str]:
    """Keys that more than one active memory claims (a supersede cut in half)."""
    from ocm.vault.folder import read_document
    from ocm.vault.memories import MemoryNote

    active: dict[str, list[str]] = defaultdict(list)
    for path in (vault / "memories").rglob("*.md"):
        if not path.name.startswith("."):
            memo = MemoryNote(read_document(path))
            if memo.key and memo.status == "active":
                active[memo.key].append(memo.id)
    several = {k: v for k, v in active.items() if len(v) > 1}
    for key, ids in several.items():
        problems.append(f"key {key}: {len(ids)} active records {sorted(ids)}")
    return sorted(several)


# --------------------------------------------------------------------------- part 3: damage


def _damage(index: Path, how: str, rng: random.Random) -> None:
    files = [p for p in index.rglob("*") if p.is_file()]
    if how == "delete":
        shutil.rmtree(index)
    elif how == "truncate-all":
        for p in files:
            p.write_bytes(b"")
    elif how == "truncate-half":
        for p in files:
            data = p.read_bytes()
            p.write_bytes(data[: len(data) // 2])
    elif how == "scramble-all":
        for p in files:
            data = bytearray(p.read_bytes())
            for _ in range(max(1, len(data) // 8)):
                if data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
            p.write_bytes(bytes(data))
    elif how == "random-bytes":
        for p in files:
            p.write_bytes(rng.randbytes(max(16, p.stat().st_size)))
    elif how == "manifest-garbage":
        (index / "manifest.json").write_bytes(b"\x00\xff{not json")
    elif how == "manifest-lies":
        data = json.loads((index / "manifest.json").read_text())
        data["notes"] = {}
        (index / "manifest.json").write_text(json.dumps(data))
    elif how == "toc-deleted":
        for p in files:
            if p.suffix == ".toc":
                p.unlink()
    elif how == "segments-deleted":
        for p in files:
            if p.suffix in (".seg", ".trm", ".pst", ".vps", ".fdt", ".fdi"):
                p.unlink()
    elif how == "is-a-file":
        shutil.rmtree(index)
        index.write_bytes(b"not a folder")
    elif how == "unreadable-dir":
        shutil.rmtree(index)
        index.mkdir()
        (index / "_MAIN_999.toc").write_bytes(rng.randbytes(64))


DAMAGE = ("delete", "truncate-all", "truncate-half", "scramble-all", "random-bytes",
          "manifest-garbage", "manifest-lies", "toc-deleted", "segments-deleted", "is-a-file",
          "unreadable-dir")


def cli_answers(repo: Path, home: Path, words: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Answers of CLI reads (ids only) and every stderr line they printed; raises on exit!=0."""
    out: dict[str, Any] = {}
    notices: list[str] = []
    commands = [[*("search", w, "--json", "--limit", "20", "--include-resolved")] for w in words]
    commands += [["memories", "--json", "--status", "all", "--limit", "100"],
                 ["list", "--json", "--limit", "100"], ["status", "--json"]]
    for args in commands:
        done = run_cli(args, repo, home)
        lines = [x for x in done.stderr.decode(errors="replace").splitlines() if x.strip()]
        if done.returncode != 0:
            raise RuntimeError(f"ocm {' '.join(args)} exited {done.returncode}: {lines[-3:]}")
        notices += lines
        data = json.loads(done.stdout)
        if args[0] == "status":
            out["status"] = (data["sessions"], data["memories"])
        else:
            out[" ".join(args)] = sorted(h["id"] for h in data)
    return out, notices


def run_damage(base: Path, seed: int, report: Report, kinds: tuple[str, ...] = DAMAGE) -> None:
    from ocm.project import Project

    rng = random.Random(seed)
    repo = make_repo(base / "damage")
    home = base / "damage-home"
    with ocm_home(home):
        project = Project.open(cwd=repo)
        project.init()
        words = seed_vault(project, rng, 40)[:3]
        project.search("alpha")
    expected, _ = cli_answers(repo, home, words)
    for how in kinds:
        _damage(repo / VAULT / ".index", how, rng)  # the previous round left it healthy
        try:
            got, notices = cli_answers(repo, home, words)
        except Exception as exc:  # noqa: BLE001 - counted
            report.index_mismatches += 1
            report.problems.append(f"damage {how}: {exc}")
            continue
        if got != expected:
            report.index_mismatches += 1
            report.problems.append(f"damage {how}: answers differ: {got} vs {expected}")
        # at most one notice line, naming the rebuild
        if len(notices) > 1 or (notices and "rebuilt" not in notices[0]):
            report.index_mismatches += 1
            report.problems.append(f"damage {how}: notices {notices}")


# --------------------------------------------------------------------------- part 4: bad input


@dataclass
class BadCase:
    name: str
    run: Callable[[Path, Path, dict[str, str]], str | None]  # -> problem, or None if refused
    setup: Callable[[Path, Path, dict[str, str]], None] | None = None
    skip: tuple[str, ...] = (".index/", ".locks/")


def _refused_cli(*args: str, stdin: str | bytes | None = None) -> Callable[..., str | None]:
    def run(repo: Path, home: Path, ctx: dict[str, str]) -> str | None:
        argv = [a.format(**ctx) for a in args]
        done = run_cli(argv, repo, home, stdin=stdin)
        err = done.stderr.decode("utf-8", "replace")
        if done.returncode != 1:
            return f"exit {done.returncode} (want 1): {err[-300:]} {done.stdout[-200:]!r}"
        lines = [x for x in err.splitlines() if x.strip()]
        if not lines or not lines[-1].startswith("error:") or "Traceback" in err:
            return f"unclear error: {err[-300:]!r}"
        return None
    return run


def _noop_hook(*args: str, payload: bytes | Callable[[Path], bytes]) -> Callable[..., str | None]:
    def run(repo: Path, home: Path, ctx: dict[str, str]) -> str | None:
        data = payload(repo) if callable(payload) else payload
        done = run_hook(list(args), data, repo, home)
        if done.returncode != 0:
            return f"hook exited {done.returncode}"
        out = done.stdout.strip()
        if out:
            try:
                json.loads(out)
            except ValueError:
                return f"hook printed non-JSON: {out[:200]!r}"
        log = repo / VAULT / ".hooks" / "hook.log"
        if not log.exists() or not log.read_text(errors="replace").strip():
            return "hook did not log the no-op"
        return None
    return run


def _write_note(rel: str, data: bytes) -> Callable[[Path, Path, dict[str, str]], None]:
    def setup(repo: Path, home: Path, ctx: dict[str, str]) -> None:
        path = repo / VAULT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return setup


GOOD_FM = b"---\nid: %s\ntype: gotcha\ntitle: T\nstatus: active\n---\n\nbody text\n"


def bad_cli_cases() -> list[BadCase]:
    big = "x" * 10_000_000
    c = _refused_cli
    cases = [
        BadCase("remember-unknown-type", c("remember", "some text", "--type", "nonsense")),
        BadCase("remember-empty-text", c("remember", "", "--type", "gotcha")),
        BadCase("remember-blank-text", c("remember", "   \n\t", "--type", "gotcha")),
        BadCase("remember-10MB-stdin", c("remember", "-", "--type", "gotcha", stdin=big)),
        BadCase("remember-non-utf8-stdin", c("remember", "-", "--type", "gotcha",
                                             stdin=b"caf\xe9 \xff\xfe")),
        BadCase("remember-nul", c("remember", "-", "--type", "gotcha", stdin="a\x00b")),
        BadCase("remember-importance-0", c("remember", "t", "--type", "gotcha",
                                           "--importance", "0")),
        BadCase("remember-importance-11", c("remember", "t", "--type", "gotcha",
                                            "--importance", "11")),
        BadCase("remember-empty-type", c("remember", "t", "--type", "")),
        BadCase("remember-lookalike-type", c("remember", "t", "--type", "gоtcha")),  # Cyrillic о
        BadCase("remember-file-escapes", c("remember", "t", "--type", "gotcha", "--file",
                                           "../../etc/passwd")),
        BadCase("remember-file-dotdot", c("remember", "-", "--type", "gotcha", "--file", "..",
                                          stdin="text")),
        BadCase("remember-key-taken", c("remember", "other value", "--type", "decision",
                                        "--key", "db.pool")),
        BadCase("remember-session-missing", c("remember", "t", "--type", "gotcha",
                                              "--session", "2020-01-01_00-00_x_missing")),
        BadCase("get-traversal", c("get", "../../etc/passwd")),
        BadCase("get-absolute", c("get", "/etc/passwd")),
        BadCase("get-dotdot", c("get", "..")),
        BadCase("get-lookalike-id", c("get", "{mem_lookalike}")),
        BadCase("get-empty", c("get", "")),
        BadCase("get-missing", c("get", "no-such-note-123")),
        BadCase("show-traversal", c("show", "../sessions/{session}")),
        BadCase("resolve-missing", c("resolve", "no-such-memory")),
        BadCase("resolve-superseded", c("resolve", "{mem_superseded}")),
        BadCase("supersede-by-missing", c("resolve", "{mem}", "--superseded-by", "ghost-1")),
        BadCase("supersede-already-superseded", c("resolve", "{mem_superseded}",
                                                  "--superseded-by", "{mem}")),
        BadCase("supersede-by-itself", c("resolve", "{mem}", "--superseded-by", "{mem}")),
        BadCase("supersede-by-inactive", c("resolve", "{mem}", "--superseded-by",
                                           "{mem_resolved}")),
        BadCase("resolve-id-and-session", c("resolve", "{mem}", "--session", "{session}")),
        BadCase("resolve-traversal", c("resolve", "../memories/gotcha/{mem}")),
        BadCase("update-unknown-type", c("update", "{mem}", "--type", "nonsense")),
        BadCase("update-empty-title", c("update", "{mem}", "--title", "   ")),
        BadCase("update-missing", c("update", "ghost-2", "--text", "x")),
        BadCase("forget-traversal", c("forget", "../../README", "--delete")),
        BadCase("forget-absolute", c("forget", "/tmp/x", "--delete")),
        BadCase("checkpoint-slug-traversal", c("checkpoint", "--slug", "../../evil",
                                               "--goal", "g")),
        BadCase("checkpoint-slug-slash", c("checkpoint", "--slug", "/etc/passwd", "--goal", "g")),
        BadCase("checkpoint-slug-empty-words", c("checkpoint", "--slug", "!!!", "--goal", "g")),
        BadCase("checkpoint-session-traversal", c("checkpoint", "--session", "../../x",
                                                  "--goal", "g")),
        BadCase("checkpoint-session-absolute", c("checkpoint", "--session", "/etc/passwd",
                                                 "--goal", "g")),
        BadCase("checkpoint-session-nul", c("checkpoint", "--input", "-",
                                            stdin='{"session_id": "a\\u0000b", "goal": "g"}')),
        BadCase("checkpoint-item-nul", c("checkpoint", "--input", "-",
                                         stdin='{"work_completed": ["a\\u0000b"]}')),
        BadCase("checkpoint-item-huge", c("checkpoint", "--done", "y" * 5000)),
        BadCase("checkpoint-10MB-input", c("checkpoint", "--input", "-",
                                           stdin=json.dumps({"goal": big}))),
        BadCase("checkpoint-bad-json", c("checkpoint", "--input", "-", stdin='{"goal": ')),
        BadCase("checkpoint-json-not-object", c("checkpoint", "--input", "-", stdin="[1, 2]")),
        BadCase("checkpoint-non-utf8-input", c("checkpoint", "--input", "-",
                                               stdin=b'{"goal": "\xff\xfe"}')),
        BadCase("checkpoint-unknown-field", c("checkpoint", "--input", "-",
                                              stdin='{"colour": "red"}')),
        BadCase("checkpoint-wrong-shape", c("checkpoint", "--input", "-",
                                            stdin='{"work_completed": "not a list"}')),
        BadCase("checkpoint-unknown-status", c("checkpoint", "--input", "-",
                                               stdin='{"status": "exploded"}')),
        BadCase("checkpoint-bad-trigger", c("checkpoint", "--trigger", "../x", "--goal", "g")),
        BadCase("checkpoint-bad-tool", c("checkpoint", "--tool", "Evil Tool!", "--goal", "g")),
        BadCase("checkpoint-closed-session", c("checkpoint", "--session", "{closed}",
                                               "--status", "open")),
        BadCase("search-unknown-status", c("search", "x", "--status", "exploded")),
        BadCase("search-limit-0", c("search", "x", "--limit", "0")),
        BadCase("recall-small-budget", c("recall", "--budget", "5")),
        # notes a person broke: a clear error naming the note, never an overwrite
        BadCase("get-malformed-frontmatter", c("get", "broken-yaml"),
                _write_note("memories/gotcha/broken-yaml.md",
                            b"---\nid: broken-yaml\ntitle: [unclosed\n---\nbody\n")),
        BadCase("resolve-missing-frontmatter-end", c("resolve", "no-end"),
                _write_note("memories/gotcha/no-end.md", b"---\nid: no-end\ntitle: x\nbody\n")),
        BadCase("resolve-duplicated-key", c("resolve", "dup-key"),
                _write_note("memories/gotcha/dup-key.md",
                            b"---\nid: dup-key\nstatus: active\nstatus: active\n---\nbody\n")),
        BadCase("update-non-utf8-note", c("update", "latin1", "--text", "new"),
                _write_note("memories/gotcha/latin1.md", GOOD_FM % b"latin1" + b"caf\xe9\n")),
        BadCase("checkpoint-into-malformed-session",
                c("checkpoint", "--session", "2020-01-01_00-00_claude-code_broken", "--done", "x"),
                _write_note("sessions/2020-01-01_00-00_claude-code_broken.md",
                            b"---\nid: 2020-01-01_00-00_claude-code_broken\ntags: [a\n---\n")),
        BadCase("get-note-over-2MB", c("get", "huge-note"),
                _write_note("memories/context/huge-note.md",
                            GOOD_FM % b"huge-note" + b"log line\n" * 400_000)),
        BadCase("checkpoint-json-with-bom", c("checkpoint", "--input", "-",
                                              stdin='\ufeff{"goal": "g"}')),
        BadCase("update-frontmatter-not-mapping", c("update", "listy", "--text", "x"),
                _write_note("memories/gotcha/listy.md", b"---\n- a\n- b\n---\nbody\n")),
    ]
    return cases


def bad_hook_cases() -> list[BadCase]:
    hook = _noop_hook
    write = post_tool_use
    skip = (".index/", ".locks/", ".hooks/hook.log")
    cases = [
        BadCase("hook-truncated-json", hook(
            "claude-code", "post-tool-use",
            payload=lambda r: write(r, "s1", str(r / "a.py"))[:40])),
        BadCase("hook-empty-payload", hook("claude-code", "post-tool-use", payload=b"")),
        BadCase("hook-json-array", hook("claude-code", "post-tool-use", payload=b"[1,2,3]")),
        BadCase("hook-non-utf8", hook("claude-code", "post-tool-use",
                                      payload=b'{"session_id": "\xff\xfe\xfd", "cwd": 1')),
        BadCase("hook-huge", hook("claude-code", "post-tool-use",
                                  payload=lambda r: write(r, "s1", str(r / "a.py"))[:-1]
                                  + b', "pad": "' + b"p" * 9_000_000 + b'"}')),
        BadCase("hook-unknown-host", hook("emacs-copilot", "post-tool-use",
                                          payload=lambda r: write(r, "s1", str(r / "a.py")))),
        BadCase("hook-unknown-event", hook("claude-code", "teleport",
                                           payload=lambda r: write(r, "s1", str(r / "a.py")))),
    ]
    for case in cases:
        case.skip = skip
    return cases


def prepare_bad_input(repo: Path, home: Path) -> dict[str, str]:
    """A vault with a few notes in every state the cases refer to."""
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    with ocm_home(home):
        project = Project.open(cwd=repo)
        project.init()
        mem = project.remember("Kafka consumer lag gotcha.", "gotcha").id
        resolved = project.remember("Old flaky test in checkout.", "gotcha").id
        project.set_memory_status(resolved, "resolved")
        archived = project.remember("Legacy deploy script.", "procedure").id
        project.forget(archived)
        old = project.remember("Pool size 20.", "decision", key="db.pool").id
        new = project.remember("Pool size 30.", "decision", key="db.pool",
                               supersede_reason="load test").id
        closed = project.checkpoint(CheckpointInput(goal="Finished work.", status="closed"),
                                    tool="claude-code").id
        session = project.checkpoint(CheckpointInput(goal="Investigate kafka lag."),
                                     tool="claude-code").id
        project.search("kafka")
    lookalike = mem.replace("a", "а", 1)  # Cyrillic а: looks the same, is another id
    return {"mem": mem, "mem_resolved": resolved, "mem_archived": archived,
            "mem_superseded": old, "mem_new": new, "closed": closed, "session": session,
            "mem_lookalike": lookalike}


def check_bad_case(case: BadCase, repo: Path, home: Path, ctx: dict[str, str]) -> list[str]:
    """Run one case; the problems found (empty when it was refused cleanly)."""
    vault = repo / VAULT
    if case.setup is not None:
        case.setup(repo, home, ctx)
    before = snapshot(vault, case.skip)
    problem = case.run(repo, home, ctx)
    after = snapshot(vault, case.skip)
    problems = [f"{case.name}: {problem}"] if problem else []
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        problems.append(f"{case.name}: vault changed: {changed[:5]}")
    return problems


def still_indexes(repo: Path, home: Path, ctx: dict[str, str]) -> list[str]:
    done = run_cli(["search", "kafka", "--json"], repo, home)
    if done.returncode != 0:
        return [f"search after bad input failed: {done.stderr[-300:]!r}"]
    ids = {h["id"] for h in json.loads(done.stdout)}
    return [] if {ctx["mem"], ctx["session"]} <= ids else [f"kafka notes not found: {ids}"]


def mcp_cases() -> list[tuple[str, str, dict[str, Any]]]:
    big = "z" * 10_000_000
    return [
        ("mcp-remember-unknown-type", "ocm__remember", {"content": "x", "type": "nonsense"}),
        ("mcp-remember-empty", "ocm__remember", {"content": "", "type": "gotcha"}),
        ("mcp-remember-10MB", "ocm__remember", {"content": big, "type": "gotcha"}),
        ("mcp-remember-nul", "ocm__remember", {"content": "a\x00b", "type": "gotcha"}),
        ("mcp-remember-bad-scope", "ocm__remember", {"content": "x", "type": "gotcha",
                                                     "scope": "galaxy"}),
        ("mcp-remember-file-escapes", "ocm__remember", {"content": "x", "type": "gotcha",
                                                        "files": ["../../../etc/passwd"]}),
        ("mcp-remember-key-taken", "ocm__remember", {"content": "y", "type": "decision",
                                                     "key": "db.pool"}),
        ("mcp-checkpoint-slug-traversal", "ocm__checkpoint", {"slug": "../../x", "goal": "g"}),
        ("mcp-checkpoint-session-traversal", "ocm__checkpoint", {"session_id": "../../etc",
                                                                 "goal": "g"}),
        ("mcp-checkpoint-session-absolute", "ocm__checkpoint", {"session_id": "/etc/passwd",
                                                                "goal": "g"}),
        ("mcp-checkpoint-nul", "ocm__checkpoint", {"work_completed": ["a\x00b"]}),
        ("mcp-checkpoint-huge-item", "ocm__checkpoint", {"work_completed": ["q" * 5000]}),
        ("mcp-checkpoint-10MB-goal", "ocm__checkpoint", {"goal": big}),
        ("mcp-checkpoint-bad-status", "ocm__checkpoint", {"status": "exploded"}),
        ("mcp-checkpoint-bad-trigger", "ocm__checkpoint", {"trigger": "../x", "goal": "g"}),
        ("mcp-checkpoint-closed", "ocm__checkpoint", {"session_id": "{closed}",
                                                      "status": "open"}),
        ("mcp-resolve-missing", "ocm__resolve_memory", {"id": "ghost-3"}),
        ("mcp-resolve-traversal", "ocm__resolve_memory", {"id": "../gotcha/{mem}"}),
        ("mcp-supersede-missing", "ocm__resolve_memory", {"id": "{mem}",
                                                          "superseded_by": "ghost-4"}),
        ("mcp-supersede-superseded", "ocm__resolve_memory", {"id": "{mem_superseded}",
                                                             "superseded_by": "{mem}"}),
        ("mcp-get-absolute", "ocm__get_note", {"id": "/etc/passwd"}),
        ("mcp-get-lookalike", "ocm__get_note", {"id": "{mem_lookalike}"}),
        ("mcp-update-nothing", "ocm__update_memory", {"id": "{mem}"}),
        ("mcp-update-bad-type", "ocm__update_memory", {"id": "{mem}", "type": "nonsense"}),
        ("mcp-forget-traversal", "ocm__forget", {"id": "../../README", "mode": "delete"}),
        ("mcp-session-files-missing", "ocm__get_session_files", {"session_id": "ghost-session"}),
        ("mcp-search-bad-status", "ocm__search", {"query": "x", "status": "exploded"}),
        ("mcp-search-bad-type", "ocm__search", {"query": "x", "type": "nonsense"}),
        ("mcp-checkpoint-lone-surrogate", "ocm__checkpoint", {"session_id": "new-host-id",
                                                              "goal": "bad \ud800 text"}),
        ("mcp-remember-lone-surrogate", "ocm__remember", {"content": "bad \udcff",
                                                          "type": "gotcha"}),
    ]


def _fill(value: Any, ctx: dict[str, str]) -> Any:
    if isinstance(value, str) and "{" in value and len(value) < 200:
        return value.format(**ctx)
    if isinstance(value, list):
        return [_fill(v, ctx) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ctx) for k, v in value.items()}
    return value


def run_mcp_cases(repo: Path, home: Path, ctx: dict[str, str],
                  cases: list[tuple[str, str, dict[str, Any]]]) -> tuple[int, list[str]]:
    """(cases run, problems): each must be an is_error result that changes nothing."""
    import anyio
    from mcp import Client

    from ocm.mcp_server.server import build_server

    vault = repo / VAULT
    problems: list[str] = []

    async def main() -> None:
        async with Client(build_server(repo)) as client:
            for name, tool, args in cases:
                before = snapshot(vault)
                result = await client.call_tool(tool, _fill(args, ctx))
                text = result.content[0].text if result.content else ""
                if result.is_error is not True:
                    problems.append(f"{name}: not refused: {text[:200]}")
                elif "Traceback" in text or not text.strip():
                    problems.append(f"{name}: unclear error {text[:200]!r}")
                if snapshot(vault) != before:
                    problems.append(f"{name}: vault changed")

    with ocm_home(home):
        anyio.run(main)
    return len(cases), problems


def run_bad_input(base: Path, report: Report, mcp: bool = True) -> None:
    repo = make_repo(base / "bad")
    home = base / "bad-home"
    ctx = prepare_bad_input(repo, home)
    for case in bad_cli_cases() + bad_hook_cases():
        report.bad_inputs += 1
        problems = check_bad_case(case, repo, home, ctx)
        report.bad_input_changes += sum(1 for p in problems if "vault changed" in p)
        report.problems += problems
    if mcp:
        n, problems = run_mcp_cases(repo, home, ctx, mcp_cases())
        report.bad_inputs += n
        report.bad_input_changes += sum(1 for p in problems if "vault changed" in p)
        report.problems += problems
    report.problems += still_indexes(repo, home, ctx)


# --------------------------------------------------------------------------- part 5: secrets


def _fake(length: int, alphabet: str, seed: str) -> str:
    rng = random.Random(f"{seed}/{length}")
    classes = [set(c) & set(alphabet) for c in (string.digits, string.ascii_uppercase,
                                                  string.ascii_lowercase)]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(length))
        if all(c & set(value) for c in classes if c):
            return value


def secret_corpus() -> list[tuple[str, str, str, str]]:
    """(kind, text before, secret, text after), assembled at run time so that this file
    holds nothing a secret scanner would flag."""
    alnum = string.ascii_letters + string.digits
    upper = string.ascii_uppercase + string.digits
    urlsafe = alnum + "-_"
    b64 = alnum + "+/"
    pem = "\n".join(_fake(64, b64, f"pem{i}") for i in range(4))
    corpus = [
        ("aws_access_key", "aws_access_key_id = ", "AK" + "IA" + _fake(16, upper, "aws")),
        ("aws_secret_key", "aws_secret_access_key = ", _fake(40, b64, "awss")),
        ("github_token", "push with ", "gh" + "p_" + _fake(36, alnum, "gh")),
        ("github_token", "bot uses ", "github" + "_pat_" + _fake(22, alnum, "p1") + "_"
         + _fake(59, alnum, "p2")),
        ("openai_key", "OPENAI_API_KEY=", "sk" + "-proj-" + _fake(56, urlsafe, "oa")),
        ("anthropic_key", "the key ", "sk" + "-ant-api03-" + _fake(93, urlsafe, "an") + "AA"),
        ("slack_token", "bot token ", "xo" + "xb-" + _fake(12, string.digits, "s1") + "-"
         + _fake(13, string.digits, "s2") + "-" + _fake(24, alnum, "s3")),
        ("slack_webhook", "POST to https://", "hooks" + ".slack.com/services/T"
         + _fake(8, upper, "w1") + "/B" + _fake(8, upper, "w2") + "/" + _fake(24, alnum, "w3")),
        ("stripe_key", "Stripe.api_key = ", "sk" + "_live_" + _fake(24, alnum, "st")),
        ("google_api_key", "maps key ", "AI" + "za" + _fake(35, urlsafe, "gg")),
        ("gitlab_token", "git push with ", "gl" + "pat-" + _fake(20, urlsafe, "gl")),
        ("npm_token", "//registry.npmjs.org/:_authToken=", "np" + "m_" + _fake(36, alnum, "np")),
        ("huggingface_token", "HF token ", "hf" + "_" + _fake(34, string.ascii_letters, "hf")),
        ("sendgrid_key", "SENDGRID ", "SG" + "." + _fake(22, urlsafe, "sg1") + "."
         + _fake(43, urlsafe, "sg2")),
        ("pypi_token", "twine token ", "pypi" + "-AgEIcHlwaS5vcmc" + _fake(60, urlsafe, "py")),
        ("jwt", "cookie was ", "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.ey" + "J"
         + _fake(40, urlsafe, "j1") + "." + _fake(43, urlsafe, "j2")),
        ("bearer_token", "Authorization: Bearer ", _fake(32, urlsafe, "br")),
        ("password", "DB_PASSWORD=", "hunter2" + _fake(8, alnum, "pw")),
        ("url_credentials", "postgres://admin:", _fake(14, alnum, "up") + "%21"),
        ("private_key", "deploy key:\n", "-----BEGIN " + "RSA PRIVATE KEY-----\n" + pem
         + "\n-----END RSA PRIVATE KEY-----"),
    ]
    after = {"url_credentials": "@db.internal:5432/app", "password": "\nDB_USER=app",
             "private_key": "\nend of key"}
    return [(kind, before, secret, after.get(kind, " is set")) for kind, before, secret in corpus
            ] + more_secret_shapes()


def more_secret_shapes() -> list[tuple[str, str, str, str]]:
    """The kinds an independent audit found stored verbatim, and a sample of the vendor
    token families: (kind, text before, secret, text after)."""
    alnum = string.ascii_letters + string.digits
    lower = string.ascii_lowercase + string.digits
    upper = string.ascii_uppercase + string.digits
    hexd = "0123456789abcdef"
    urlsafe = alnum + "-_"
    b64 = alnum + "+/"

    def f(n: int, alphabet: str = alnum, seed: str = "") -> str:
        return _fake(n, alphabet, seed or f"{n}{alphabet[:3]}")

    uuid = "-".join(f(n, hexd, f"uu{n}") for n in (8, 4, 4, 4, 12))
    putty = ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
             "Public-Lines: 2\n" + f(64, b64, "pp1") + "\n" + f(20, b64, "pp2")
             + "\nPrivate-Lines: 1\n" + f(44, b64, "pp3") + "\nPrivate-MAC: " + f(64, hexd, "pm"))
    shapes = [
        # kind, before, secret, after
        ("stripe_key", "STRIPE_WEBHOOK_SECRET=", "wh" + "sec_" + f(32, seed="whs"), "\n"),
        ("slack_app_token", "socket mode uses ", "xa" + "pp-1-A" + f(10, upper, "xa1") + "-"
         + f(13, string.digits, "xa2") + "-" + f(64, hexd, "xa3"), " today"),
        ("gitlab_cicd_job_token", "CI_JOB_TOKEN is ", "gl" + "cbt-" + f(3, seed="cb1") + "_"
         + f(20, urlsafe, "cb2"), " here"),
        ("grafana_service_account_token", "grafana sa ", "gl" + "sa_" + f(32, seed="gs1") + "_"
         + f(8, hexd, "gs2"), " rotated"),
        ("google_oauth_secret", "client secret ", "GOC" + "SPX-" + f(28, urlsafe, "goc"), " set"),
        ("heroku_api_key_v2", "heroku login ", "HR" + "KU-AA" + f(58, urlsafe, "hrk"), " ok"),
        ("azure_storage_key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
         f(86, b64, "azk") + "==", ";EndpointSuffix=core.windows.net"),
        ("azure_sas_token", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=",
         f(43, alnum, "sas") + "%3D", " expires"),
        ("azure_ad_client_secret", "AZURE_CLIENT_SECRET ", f(3, seed="az1") + "8Q~"
         + f(34, urlsafe, "az2"), " for the app"),
        ("digitalocean_pat", "doctl auth init -t ", "do" + "p_v1_" + f(64, hexd, "dop"), " ok"),
        ("shopify_access_token", "X-Shopify-Access-Token: ", "sh" + "pat_" + f(32, hexd, "shp"),
         " sent"),
        ("databricks_api_token", "databricks host token ", "da" + "pi" + f(32, hexd, "dbx"),
         " set"),
        ("vault_service_token", "VAULT_TOKEN is ", "hv" + "s." + f(92, urlsafe, "hvs"), " now"),
        ("mailgun_key", "mailgun ", "ke" + "y-" + f(32, hexd, "mgk"), " for sends"),
        ("twilio_api_key", "twilio api key ", "SK" + f(32, hexd, "twl"), " stored"),
        ("telegram_bot_token", "bot ", f(10, string.digits, "tg1") + ":AA" + f(33, urlsafe, "tg2"),
         " polls"),
        ("discord_bot_token", "DISCORD bot ", "MT" + f(22, alnum, "dc1") + "."
         + f(6, urlsafe, "dc2")
         + "." + f(38, urlsafe, "dc3"), " online"),
        ("putty_private_key", "ppk file:\n", putty, "\nend of key"),
        ("basic_auth", "Authorization: Basic ", f(28, b64, "bas") + "==", "\n"),
        ("curl_auth_user", "curl -u ", "admin:" + f(14, alnum, "cau"), " https://api.local"),
        ("cli_password", "mysql -u root -p", f(12, alnum, "myp"), " app_db"),
        ("cli_password", "docker login -u bot -p ", f(16, alnum, "dkp"), " registry.local"),
        ("cli_password", "deploy.sh --password=", f(14, alnum, "clp"), " --verbose"),
        ("netrc_password", "machine api.example.com login bot password ", f(16, alnum, "nrc"),
         "\n"),
        ("prose_secret", "the password is ", "Tr0ub4dor" + f(4, alnum, "prs"), ", keep it"),
        ("prose_secret", "AWS secret key is ", f(40, b64, "awsp"), " (staging)"),
        ("password", "credentials:\n  secret: ", f(20, alnum, "yml"), "\n"),
        ("password", '{"client_secret": "', f(24, alnum, "jsn"), '"}'),
        ("password", 'api_token = "', f(30, alnum, "tml"), '"\n'),
        ("password", "export AUTH_TOKEN=", f(24, alnum, "env"), "\n"),
        ("password", "X-Api-Key: ", f(32, alnum, "xak"), "\n"),
        ("url_credentials", "git clone https://bot:", f(20, alnum, "gcl"),
         "@git.example.com/r.git"),
        ("age_secret_key", "age key ", "AGE-SECRET-KEY-1" + "".join(
            random.Random(7).choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") for _ in range(58)), " x"),
        ("alibaba_access_key_id", "aliyun ", "LT" + "AI" + f(20, alnum, "ali"), " ok"),
        ("artifactory_api_key", "jfrog ", "AK" + "Cp" + f(69, alnum, "art"), " ok"),
        ("clojars_api_token", "clojars ", "CLO" + "JARS_" + f(60, lower, "clj"), " ok"),
        ("doppler_api_token", "doppler ", "dp" + ".pt." + f(43, alnum, "dpl"), " ok"),
        ("duffel_api_token", "duffel ", "duf" + "fel_test_" + f(43, urlsafe, "duf"), " ok"),
        ("dynatrace_api_token", "dt ", "dt0" + "c01." + f(24, upper, "dt1") + "."
         + f(64, upper, "dt2"), " ok"),
        ("easypost_api_token", "easypost ", "EZ" + "AK" + f(54, alnum, "ezk"), " ok"),
        ("flyio_access_token", "fly ", "fo" + "1_" + f(43, urlsafe, "fly"), " ok"),
        ("frameio_api_token", "frameio ", "fio" + "-u-" + f(64, urlsafe, "fio"), " ok"),
        ("gitlab_token", "deploy ", "gl" + "dt-" + f(20, urlsafe, "gdt"), " ok"),
        ("gitlab_token", "runner ", "gl" + "rt-" + f(20, urlsafe, "grt"),
         " ok"),
        ("grafana_cloud_api_token", "grafana cloud ", "gl" + "c_" + f(40, b64, "glc"), " ok"),
        ("infracost_api_token", "infracost ", "ic" + "o-" + f(32, alnum, "ico"), " ok"),
        ("linear_api_key", "linear ", "lin" + "_api_" + f(40, alnum, "lin"), " ok"),
        ("notion_api_token", "notion ", "nt" + "n_" + f(11, string.digits, "nt1")
         + f(35, alnum, "nt2"), " ok"),
        ("openshift_user_token", "oc login --token ", "sha" + "256~" + f(43, urlsafe, "ocp"),
         " ok"),
        ("perplexity_api_key", "pplx ", "pp" + "lx-" + f(48, alnum, "ppl"), " ok"),
        ("planetscale_password", "pscale ", "psc" + "ale_pw_" + f(43, urlsafe, "psp"), " ok"),
        ("postman_api_token", "postman ", "PM" + "AK-" + f(24, hexd, "pm1") + "-"
         + f(34, hexd, "pm2"), " ok"),
        ("prefect_api_token", "prefect ", "pn" + "u_" + f(36, alnum, "pnu"), " ok"),
        ("pulumi_api_token", "pulumi ", "pu" + "l-" + f(40, hexd, "pul"), " ok"),
        ("readme_api_token", "readme ", "rd" + "me_" + f(70, lower, "rdm"), " ok"),
        ("rubygems_api_token", "gem ", "ruby" + "gems_" + f(48, hexd, "rbg"), " ok"),
        ("scalingo_api_token", "scalingo ", "tk" + "-us-" + f(48, urlsafe, "scl"), " ok"),
        ("sendinblue_api_token", "brevo ", "xkey" + "sib-" + f(64, hexd, "sib") + "-"
         + f(16, alnum, "sb2"), " ok"),
        ("sentry_user_token", "sentry ", "sntr" + "yu_" + f(64, hexd, "sny"), " ok"),
        ("shippo_api_token", "shippo ", "shi" + "ppo_live_" + f(40, hexd, "shi"), " ok"),
        ("square_access_token", "square ", "sq0" + "atp-" + f(22, urlsafe, "sq"), " ok"),
        ("password", "HEROKU_API_KEY=", uuid, "\n"),
        ("new_relic_user_api_key", "NEW_RELIC_API_KEY=", "NR" + "AK-" + f(27, upper, "nr"), "\n"),
        ("password", "SENTRY_AUTH_TOKEN=", f(64, hexd, "sen"), "\n"),
        ("password", "OKTA_TOKEN=", "00" + f(40, urlsafe, "okt"), "\n"),
        ("password", "MAPBOX_TOKEN=", "pk." + f(60, lower, "mb1") + "."
         + f(22, lower, "mb2"),
         "\n"),
        ("adobe_client_secret", "adobe ", "p8" + "e-" + f(32, alnum, "adb"), " ok"),
        ("atlassian_api_token", "JIRA_API_TOKEN=", "ATA" + "TT3" + f(186, urlsafe, "atl"), "\n"),
        ("gitlab_feed_token", "feed ", "gl" + "ft-" + f(20, urlsafe, "gft"), " ok"),
        ("gitlab_scim_token", "scim ", "gl" + "soat-" + f(20, urlsafe, "gsc"), " ok"),
        ("slack_token", "user token ", "xo" + "xp-" + f(12, string.digits, "su1") + "-"
         + f(12, string.digits, "su2") + "-" + f(12, string.digits, "su3") + "-"
         + f(32, alnum, "su4"), " ok"),
        ("slack_token", "legacy ", "xo" + "xa-2-" + f(30, alnum, "slw"), " ok"),
        ("shopify_shared_secret", "shopify ", "sh" + "pss_" + f(32, hexd, "shs"), " ok"),
        ("password", "SUMO_ACCESS_KEY=", f(64, alnum, "sum"), "\n"),
        ("typeform_api_token", "TYPEFORM_TOKEN=", "tf" + "p_" + f(59, urlsafe, "tfp"), "\n"),
        ("yandex_api_key", "YANDEX_KEY=", "AQ" + "VN" + f(36, urlsafe, "ydx"), "\n"),
        ("password", "ZENDESK_TOKEN=", f(40, alnum, "zdk"), "\n"),
        ("settlemint_personal_access_token", "settlemint ", "sm" + "_pat_" + f(16, alnum, "smp"),
         " ok"),
        ("intra42_client_secret", "42 ", "s-s4t2" + "ud-" + f(64, hexd, "i42"), " ok"),
        ("huggingface_org_token", "hf org ", "api" + "_org_" + f(34, alnum, "hfo"), " ok"),
        ("sentry_org_token", "sentry org ", "sntr" + "ys_" + f(120, alnum, "sno"), " ok"),
        ("onepassword_service_account_token", "op ", "ops" + "_eyJ" + f(250, alnum, "ops"),
         " ok"),
        ("digitalocean_pat", "doctl oauth ", "do" + "o_v1_" + f(64, hexd, "doo"), " ok"),
        ("gitlab_feature_flag_client_token", "unleash ", "gl" + "ffct-" + f(20, urlsafe, "gff"),
         " ok"),
        ("gitlab_incoming_mail_token", "mail ", "gl" + "imt-" + f(25, urlsafe, "gim"), " ok"),
        ("gitlab_kubernetes_agent_token", "agent ", "gl" + "agent-" + f(50, urlsafe, "gag"),
         " ok"),
        ("gitlab_oauth_app_secret", "oauth app ", "gl" + "oas-" + f(64, urlsafe, "goa"), " ok"),
        ("gitlab_runner_registration_token", "register ", "GR13" + "48941" + f(20, urlsafe, "grr"),
         " ok"),
        ("circleci_personal_token", "circle ", "CCI" + "PAT_" + f(22, alnum, "cc1") + "_"
         + f(40, hexd, "cc2"), " ok"),
        ("buildkite_api_token", "buildkite ", "bk" + "ua_" + f(40, hexd, "bkt"), " ok"),
        ("sourcegraph_access_token", "src ", "sg" + "p_" + f(40, hexd, "sgp"), " ok"),
        ("dockerhub_access_token", "docker hub ", "dckr" + "_pat_" + f(27, urlsafe, "dkh"), " ok"),
        ("netlify_access_token", "netlify ", "nf" + "p_" + f(40, alnum, "nfp"), " ok"),
        ("supabase_access_token", "supabase ", "sb" + "p_" + f(40, hexd, "sbp"), " ok"),
        ("neon_api_key", "neon ", "na" + "pi_" + f(64, lower, "nea"), " ok"),
        ("deno_deploy_token", "deno ", "dd" + "p_" + f(36, alnum, "ddp"), " ok"),
        ("tailscale_key", "tailscale up --auth-key ", "tskey" + "-auth-k" + f(11, alnum, "ts1")
         + "CNTRL-" + f(32, alnum, "ts2"), " ok"),
        ("akamai_client_token", "akamai ", "ak" + "ab-" + f(16, lower, "ak1") + "-"
         + f(16, lower, "ak2"), " ok"),
        ("new_relic_insert_key", "insert ", "NR" + "II-" + f(32, urlsafe, "nri"), " ok"),
        ("langsmith_api_key", "langsmith ", "lsv2" + "_pt_" + f(32, hexd, "ls1") + "_"
         + f(10, hexd, "ls2"), " ok"),
        ("flutterwave_secret_key", "flutterwave ", "FLW" + "SECK-" + f(32, hexd, "flw") + "-X",
         " ok"),
        ("contentful_management_token", "contentful ", "CF" + "PAT-" + f(43, urlsafe, "cfp"),
         " ok"),
        ("figma_access_token", "figma ", "fi" + "gd_" + f(40, urlsafe, "fig"), " ok"),
        ("groq_api_key", "groq ", "gs" + "k_" + f(52, alnum, "gsk"), " ok"),
        ("xai_api_key", "grok ", "xa" + "i-" + f(80, alnum, "xai"), " ok"),
        ("replicate_api_token", "replicate ", "r" + "8_" + f(37, alnum, "r8r"), " ok"),
        ("pinecone_api_key", "pinecone ", "pc" + "sk_" + f(5, alnum, "pc1") + "_"
         + f(63, alnum, "pc2"), " ok"),
        ("google_oauth_access_token", "gcloud ", "ya" + "29." + f(120, urlsafe, "y29"), " ok"),
        ("google_oauth_refresh_token", "refresh ", "1/" + "/0" + f(100, urlsafe, "g10"), " ok"),
        ("cloudflare_origin_ca_key", "origin ca ", "v1" + ".0-" + f(24, hexd, "cf1") + "-"
         + f(146, hexd, "cf2"), " ok"),
        ("mapbox_secret_token", "mapbox ", "sk" + ".eyJ1Ijoi" + f(40, urlsafe, "mb3") + "."
         + f(22, urlsafe, "mb4"), " ok"),
        ("hubspot_private_app_token", "hubspot ", "pat" + "-na1-" + uuid, " ok"),
        ("meta_access_token", "graph api ", "EA" + "AB" + f(150, alnum, "fbk"), " ok"),
        ("onepassword_secret_key", "1password ", "A" + "3-" + "-".join(
            f(n, upper, f"op{n}{i}") for i, n in enumerate((6, 6, 5, 5, 5, 5))), " ok"),
        ("notion_api_token", "notion legacy ", "sec" + "ret_" + f(43, alnum, "nts"), " ok"),
        ("hashicorp_tf_api_token", "TF_TOKEN is ", f(14, alnum, "tf1") + ".atlas" + "v1."
         + f(67, urlsafe, "tf2"), " ok"),
        ("airtable_personal_access_token", "airtable ", "pat" + f(14, alnum, "at1") + "."
         + f(64, hexd, "at2"), " ok"),
    ] + issue31_secret_shapes()
    return shapes


def issue31_secret_shapes() -> list[tuple[str, str, str, str]]:
    """The kinds issue #31 found never recognised and the two leaks, in the shapes the
    vendors publish (synthetic values): (kind, text before, secret, text after)."""
    alnum = string.ascii_letters + string.digits
    hexd = "0123456789abcdef"
    b64 = alnum + "+/"
    b32 = "abcdefghijklmnopqrstuvwxyz234567"

    def f(n: int, alphabet: str = alnum, seed: str = "") -> str:
        return _fake(n, alphabet, seed or f"i31{n}{alphabet[:3]}")

    pem_b64 = "LS0tLS1CRUdJTi" + "BSU0EgUFJJVkFURSBLRVkt" + f(80, b64, "pemb")
    return [
        ("rails_secret_key_base", "SECRET_KEY_BASE=", f(128, hexd, "rails"), "\nRAILS_ENV=x"),
        ("laravel_app_key", "APP_KEY=", "base" + "64:" + f(43, b64, "lara") + "=", "\nAPP_X=1"),
        ("datadog_key", "export DD_APP_KEY=", f(40, hexd, "ddapp"), "\n"),
        ("datadog_key", "DD-APPLICATION-KEY: ", f(40, hexd, "ddhdr"), "\n"),
        ("algolia_key", "ALGOLIA_ADMIN_KEY=", f(32, hexd, "algo"), "\n"),
        ("azure_devops_pat", "pat ", f(52, alnum, "ado1") + "JQQJ" + "99" + f(18, alnum, "ado2")
         + "AZ" + "DO" + f(4, alnum, "ado3"), " ok"),
        ("azure_devops_pat", "AZURE_DEVOPS_EXT_PAT=", f(52, b32, "ado4"), "\n"),
        ("authorization_token", 'curl -H "Authorization: token ', f(40, hexd, "ghtok"),
         '" https://api.github.com'),
        ("okta_api_token", "okta key SS" + "WS ", "00" + f(40, alnum + "_-", "okta"), " ok"),
        ("api_key_header", 'curl -H "api-key: ', f(32, hexd, "aoai"), '" https://x.azure.com'),
        ("cookie", "Cookie: ", "sessionid=" + f(32, alnum, "ck1") + "; csrftoken="
         + f(32, alnum, "ck2"), "\n"),
        ("cli_password", "redis-cli -h cache -a ", f(20, alnum, "redis"), " ping"),
        ("pgpass_password", "db.internal:5432:app:alice:", f(16, alnum, "pgp"), "\nnext"),
        ("cli_password", "openssl pkcs12 -export -passout pass:", f(14, alnum, "ossl"),
         " -out a.p12"),
        ("cli_password", "az login -u me@corp.example -p ", f(16, alnum, "azl"), " --x"),
        ("cli_password", "sqlplus scott/", f(12, alnum, "sqlp"), "@//db:1521/ORCL"),
        ("npm_auth", "_auth=", f(40, b64, "npmrc"), "\nemail=a@b.c"),
        ("docker_auth", '{"auths":{"ghcr.io":{"auth":"', f(40, b64, "dock"), '"}}}'),
        ("docker_auth", ".dockerconfigjson: ", "eyJhdXRocyI6" + f(60, b64, "dcj"), "\ntype: x"),
        ("kubernetes_secret", "kind: Secret\ndata:\n  password: ", f(24, b64, "k8s"),
         "\nmetadata:"),
        ("private_key", "    client-key-data: ", pem_b64, "\n"),
        ("slack_token", "refresh ", "xo" + "xe-1-" + f(60, alnum, "xoxe"), " ok"),
        ("bitbucket_app_password", "app password ", "AT" + "BB" + f(32, alnum, "atbb"), " ok"),
        ("bitbucket_access_token", "repo token ", "ATCTT3" + "xFfGN0" + f(180, alnum, "atct"),
         " ok"),
        ("discord_webhook", "https://discord.com/api/webhooks/",
         f(18, "0123456789", "dsc1") + "/" + f(68, alnum + "_-", "dsc2"), " ok"),
        ("teams_webhook", "https://corp.webhook.office.com/webhookb2/",
         f(36, hexd, "tm1") + "@" + f(36, hexd, "tm2") + "/IncomingWebhook/" + f(32, hexd, "tm3"),
         " ok"),
        ("aws_presigned_signature", "https://b.s3.amazonaws.com/k?X-Amz-Signature=",
         f(64, hexd, "awsps"), "&x=1"),
        ("azure_function_key", "https://app.azurewebsites.net/api/fn?code=",
         f(54, alnum, "azfn") + "==", " ok"),
        ("firebase_fcm_key", "key=", "AA" + "AA" + f(7, alnum, "fcm1") + ":APA" + "91b"
         + f(134, alnum + "_-", "fcm2"), " ok"),
        ("wandb_api_key", "wandb login ", f(40, hexd, "wandb"), " ok"),
        ("kaggle_key", '{"username":"alice","key":"', f(32, hexd, "kaggle"), '"}'),
        ("render_api_key", "render ", "rn" + "d_" + f(32, alnum, "rnd"), " ok"),
        ("linear_oauth_token", "linear ", "lin_" + "oauth_" + f(64, hexd, "lino"), " ok"),
        ("mailchimp_api_key", "mailchimp ", f(32, hexd, "mc") + "-us21", " ok"),
        ("braintree_access_token", "braintree ", "access_token$" + "production$"
         + f(16, "abcdefghijklmnopqrstuvwxyz0123456789", "bt1") + "$" + f(32, hexd, "bt2"),
         " ok"),
        # The audit's two leaks and the value after a slash.
        ("cli_password", "deploy --cred '", "database: PASSWORD: " + f(14, alnum, "cred1"),
         "' failed"),
        ("cli_password", "deploy --cred '", "CLIENT_SECRET: " + f(20, alnum, "cred2"),
         "' failed"),
        ("password", "DB_PASSWORD=", "/" + f(14, alnum, "dbslash"), "\nDB_USER=app"),
    ]


# Secrets recognised only by what surrounds them (`PASSWORD=`, `Bearer `, `user:...@`): a file
# path holding one bare is indistinguishable from any random name, so paths get the others.
# Vendor keys named only by their variable (`HEROKU_API_KEY=<uuid>`) and the command-line,
# header, prose and connection-string shapes are of this sort too; key blocks span lines,
# which paths do not.
CONTEXT_KINDS = {
    "aws_secret_key", "bearer_token", "password", "url_credentials", "private_key",
    "putty_private_key", "azure_ad_client_secret", "azure_sas_token", "azure_storage_key",
    "basic_auth", "cli_password", "curl_auth_user", "netrc_password", "prose_secret",
    "new_relic_user_api_key", "typeform_api_token", "yandex_api_key",
    # issue #31: known by the name or header before them
    "rails_secret_key_base", "laravel_app_key", "datadog_key", "algolia_key", "azure_devops_pat",
    "authorization_token", "okta_api_token", "api_key_header", "cookie", "pgpass_password",
    "npm_auth", "docker_auth", "kubernetes_secret", "discord_webhook", "teams_webhook",
    "aws_presigned_signature", "azure_function_key", "wandb_api_key", "kaggle_key",
}  # fmt: skip


def _secret_needles(secret: str) -> list[str]:
    """What must not appear on disk: the secret, and (for a key block) each of its lines."""
    lines = [x for x in secret.splitlines() if len(x) >= 16 and "-----" not in x]
    return [secret, *lines] if "\n" in secret else [secret]


def run_secrets(base: Path, report: Report) -> list[str]:
    """Write every secret through every path; returns the context markers to look for."""
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput, PlanFile, Reference

    repo = make_repo(base / "secrets")
    home = base / "secrets-home"
    corpus = secret_corpus()
    markers: list[str] = []
    with ocm_home(home):
        project = Project.open(cwd=repo)
        project.init()
        sid = project.checkpoint(CheckpointInput(goal="Secrets session."), session_id="sec-1",
                                 tool="claude-code").id
        last = len(corpus) - 1
        for i, (kind, before, secret, after) in enumerate(corpus):
            text = f"{before}{secret}{after}"
            mark = f"mark{kind.replace('_', '')}"
            # goal and pending are replaced by each checkpoint: only the last ones stay
            markers += [f"{mark}{f}" for f in ("done", "sum", "dec", "mem", "title", "prompt")]
            markers += [f"{mark}{f}" for f in ("goal", "pend") if i == last]
            project.checkpoint(CheckpointInput(
                goal=f"{mark}goal {text}", work_completed=[f"{mark}done {text} end"],
                work_pending=[f"{mark}pend {text}"], work_summary=[f"{mark}sum {text}"],
                decisions=[f"**{mark}dec:** {text}"], diff_summary=f"diff {text}",
                plan_files=[PlanFile(f"plans/{kind}.md", f"plan {text}")],
                references=[Reference(f"https://example.com/{kind}?token={secret}", "ref")],
                tags=[f"tag-{i}"]), session_id=sid)
            project.remember(f"{mark}mem {text}\nsecond line", "gotcha",
                             title=f"{mark}title {text}", tags=[f"t{i}"],
                             files=[f"src/{kind}.py"], key=f"k-{i}")
            # prompts and file paths come in through the hooks
            run_hook(["claude-code", "user-prompt-submit"],
                     prompt_submit(repo, "sec-1", f"{mark}prompt {text}"), repo, home)
            if kind not in CONTEXT_KINDS:
                run_hook(["claude-code", "post-tool-use"],
                         post_tool_use(repo, "sec-1", str(repo / f"cfg/{secret}.txt")),
                         repo, home)
        project.fold_journal()
        project.search("anything")  # the index holds the text too
        project.remember(f"user-scope {''.join(corpus[0][1:])}", "preference",
                         scope="user", title="user pref")
    blobs = {**{f"vault/{k}": v for k, v in all_file_bytes(repo / VAULT).items()},
             **{f"home/{k}": v for k, v in all_file_bytes(home).items()}}
    for kind, _before, secret, _after in corpus:
        for needle in _secret_needles(secret):
            raw = needle.encode()
            where = [k for k, v in blobs.items() if raw in v]
            if where:
                report.secrets_leaked += 1
                report.problems.append(f"secret {kind} on disk in {where[:3]}")
                break
    notes = "\n".join(note_texts(repo / VAULT).values())
    missing = [m for m in markers if m not in notes]
    for m in missing[:10]:
        report.problems.append(f"text around a secret lost: {m}")
    report.lost += len(missing)
    return markers


# --------------------------------------------------------------------------- part 6: isolation


def run_isolation(base: Path, report: Report) -> None:
    from ocm.project import Project, SearchRequest

    home = base / "iso-home"
    repos = [make_repo(base / f"iso-{name}") for name in ("alpha", "beta")]
    ids: dict[str, dict[str, str]] = {}
    with ocm_home(home):
        for repo in repos:
            project = Project.open(cwd=repo)
            project.init()
            name = repo.name.removeprefix("iso-")
            from ocm.vault.sessions import CheckpointInput

            ids[name] = {
                "memory": project.remember(f"sharedword {name}word memory.", "gotcha").id,
                "session": project.checkpoint(CheckpointInput(goal=f"sharedword {name}word "
                                                                   "session."),
                                              tool="claude-code").id,
            }
        user = Project.open(cwd=repos[0]).remember("sharedword userword preference.",
                                                   "preference", scope="user").id
        for repo in repos:
            project = Project.open(cwd=repo)
            mine, other = (r.name.removeprefix("iso-") for r in (
                repo, next(r for r in repos if r != repo)))

            def search(query: str, scope: str, project: Any = project) -> set[str]:
                return {h.id for h in project.search(SearchRequest(query=query, scope=scope,
                                                                   limit=50))}

            checks = {
                "project scope sees own notes + user notes": (
                    search("sharedword", "project"), set(ids[mine].values()) | {user}),
                "project scope never sees the other project": (
                    search(f"{other}word", "project"), set()),
                "global scope sees every project": (
                    search("sharedword", "global"),
                    set(ids[mine].values()) | set(ids[other].values()) | {user}),
                "user scope sees only user notes": (search("sharedword", "user"), {user}),
            }
            for what, (got, want) in checks.items():
                if got != want:
                    report.index_mismatches += 1
                    report.problems.append(f"isolation {mine}: {what}: {sorted(got)} vs "
                                           f"{sorted(want)}")
            listed = {h.id for h in project.list_memories(limit=100)}
            if listed != {ids[mine]["memory"], user}:
                report.index_mismatches += 1
                report.problems.append(f"isolation {mine}: list_memories {sorted(listed)}")
    stray = [p for p in (home / "memories").rglob("*.md")
             if "userword" not in p.read_text(encoding="utf-8")] if (home / "memories").exists(
             ) else []
    if stray or (home / "sessions").exists() and any((home / "sessions").iterdir()):
        report.index_mismatches += 1
        report.problems.append(f"project notes in the user vault: {stray}")


# --------------------------------------------------------------------------- main


def run_all(writers: int, ops: int, kills: int, seed: int, keep: Path | None = None,
            progress: Callable[[str], None] | None = None) -> Report:
    report = Report()
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="ocm-stress-") as tmp:
        base = Path(keep) if keep else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for name, part in (
            ("writers", lambda: run_writers(base, writers, ops, seed, report)),
            ("session race", lambda: run_session_race(base, writers, seed, report)),
            ("kills", lambda: run_kills(base, kills, seed, report, seed_notes=300)),
            ("damage", lambda: run_damage(base, seed, report)),
            ("bad input", lambda: run_bad_input(base, report)),
            ("secrets", lambda: run_secrets(base, report)),
            ("isolation", lambda: run_isolation(base, report)),
        ):
            start = time.monotonic()
            part()
            say(f"{name}: {time.monotonic() - start:.1f}s")
    return report


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["_worker"]:
        worker_main(args[1])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--ops", type=int, default=200, help="operations per writer")
    parser.add_argument("--kills", type=int, default=200, help="kill -9 trials")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    opts = parser.parse_args(args)
    start = time.monotonic()
    report = run_all(opts.writers, opts.ops, opts.kills, opts.seed, opts.keep,
                     progress=lambda msg: print(msg, file=sys.stderr))
    summary = report.summary()
    summary["seconds"] = round(time.monotonic() - start, 1)
    if opts.json:
        print(json.dumps(summary, indent=2))
    else:
        for key, value in summary.items():
            if key != "problems":
                print(f"{key:>18}: {value}")
        for problem in report.problems[:50]:
            print(f"  ! {problem}")
    zero = ("lost", "duplicated", "torn_files", "index_mismatches", "bad_input_changes",
            "secrets_leaked", "chain_errors")
    return 1 if any(summary[k] for k in zero) or report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
