"""Team memory through git, simulated: N members share one project through clones of a bare
repository and work for D days.

    python bench/team.py                      # 200 days, 3 members, ocm's merge driver
    python bench/team.py --mode union --days 30   # the same days with git's `union` driver
    python bench/team.py --mode text --days 30    # ... with git's default line merge
    python bench/team.py --json               # figures as JSON

Every day each member, in a random order, runs a session (checkpoints that append bullets,
sometimes closing it), remembers facts, replaces one of a few shared keys (`--key` with a
supersede reason), resolves a memory, tags a shared memory, and edits a note by hand (a
line appended to a memory or to another member's session). Then each commits and, in a
random order, pulls (merge or rebase, chosen at random) and pushes. Writes go through the
product's own path (`ocm.project.Project`, one per member, kept for the whole run as the MCP
server keeps it); git runs the merge driver as a real `ocm merge-note` process.

Counted: pulls that stopped with a conflict a person must resolve (a baseline mode's person
is simulated by `git checkout --ours`), notes a reader cannot parse (e.g. a frontmatter key
duplicated by `union`), bullets and records written during the run that any clone lost,
keys with two active records after each member's next read, and whether every clone gives
the same search answers (and holds the same notes) once all have pulled: the same results
in the same order, and the same results in any order (scores come from the live documents
alone, `ocm/indexer/livestats.py`, so an index's history does not change them). Timed: a
pull and the search after it, at the final vault size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ocm.agents.base import executables
from ocm.project import Project
from ocm.vault.errors import OcmError
from ocm.vault.markdown import Document
from ocm.vault.sessions import CheckpointInput

NAMES = ("ann", "bob", "cai", "dee", "eve")
KEYS = ("db.pool", "api.timeout", "cache.ttl", "deploy.region", "log.level")
TYPES = ("gotcha", "decision", "bug_fix", "discovery", "procedure")
WORDS = ("stripe", "webhook", "retry", "queue", "postgres", "pool", "cache", "redis", "deploy",
         "canary", "flaky", "test", "timeout", "header", "token", "parser", "migration", "index",
         "shard", "replica", "lock", "worker", "cron", "batch", "schema", "client", "server",
         "latency", "memory", "leak", "build", "lint", "docs")
QUERIES = ("stripe webhook", "postgres pool", "cache redis", "flaky test timeout",
           "deploy canary", "db.pool", "migration index")


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd.name}: {done.stderr.strip()}")
    return done


@dataclass
class Member:
    name: str
    root: Path
    project: Project
    session: str | None = None


@dataclass
class Tally:
    days: int = 0
    pulls: int = 0
    merges: int = 0
    rebases: int = 0
    conflicts: int = 0
    conflicted_files: int = 0
    unreadable_notes: int = 0
    records_written: int = 0
    bullets_written: int = 0
    lost_records: int = 0
    lost_bullets: int = 0
    double_active_keys: int = 0
    repairs: int = 0
    identical_answers: bool = False
    identical_result_sets: bool = False
    identical_notes: bool = False
    notes_final: int = 0
    pull_search_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _text(rng: random.Random, n: int = 6) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Simulation:
    def __init__(self, where: Path, members: int, mode: str, seed: int) -> None:
        self.where, self.mode, self.rng = where, mode, random.Random(seed)
        self.tally = Tally()
        self.progress = 0  # print the running figures every this many days (0: never)
        self.expected_records: set[str] = set()
        self.expected_lines: list[tuple[str, str]] = []  # (note id, a line it must hold)
        self.clock = datetime(2026, 1, 5, 9, 0, 0)
        origin = where / "origin.git"
        git(where, "init", "-q", "--bare", "-b", "main", str(origin))
        self.members: list[Member] = []
        for index in range(members):
            name = NAMES[index]
            root = where / name
            git(where, "clone", "-q", str(origin), str(root))
            git(root, "config", "user.name", name.title())
            git(root, "config", "user.email", f"{name}@example.com")
            if index == 0:
                (root / "README.md").write_text("# shared project\n")
                git(root, "add", "README.md")
                git(root, "commit", "-q", "-m", "init")
                project = Project.open(cwd=root)
                project.init(team=True, share_sessions=True, ocm_command=executables()[1])
                self._baseline_attributes(root)
                git(root, "add", "-A")
                git(root, "commit", "-q", "-m", "share ocm memory")
                git(root, "push", "-q", "origin", "main")
            else:
                git(root, "pull", "-q", "origin", "main")
                project = Project.open(cwd=root)
                project.init(ocm_command=executables()[1])
            self.members.append(Member(name, root, project))

    def _baseline_attributes(self, root: Path) -> None:
        if self.mode == "driver":
            return
        attributes = root / ".openCodeMemory" / ".gitattributes"
        text = attributes.read_text(encoding="utf-8")
        attributes.write_text(text.replace("merge=ocm-note", f"merge={self.mode}"))

    def tick(self, minutes: int = 7) -> None:
        self.clock += timedelta(minutes=minutes)
        os.environ["OCM_NOW"] = self.clock.strftime("%Y-%m-%dT%H:%M:%S")

    # -- one member's day -------------------------------------------------------------
    def work(self, m: Member, day: int) -> None:
        rng, p = self.rng, m.project
        self.tick()
        if m.session is None or rng.random() < 0.5:
            m.session = p.start_session("claude-code", agent_session_id=f"{m.name}-{day}").id
        for _ in range(rng.randint(1, 3)):
            self.tick()
            done = [f"{m.name} d{day} {_text(rng, 4)} #{rng.randrange(10**6)}"]
            result = p.checkpoint(CheckpointInput(goal=f"{m.name} works on {_text(rng, 3)}",
                                                  work_completed=done), session_id=m.session)
            self.expected_lines += [(result.id, f"- {done[0]}")]
            self.tally.bullets_written += 1
        for _ in range(rng.randint(1, 2)):
            self.tick()
            fact = f"{_text(rng, 8)} (#{rng.randrange(10**6)} by {m.name})"
            made = p.remember(fact, rng.choice(TYPES), session=m.session, auto_supersede=False)
            self.expected_records.add(made.id)
            self.tally.records_written += 1
        if rng.random() < 0.7:
            self.tick()
            key = rng.choice(KEYS[:3])
            made = p.remember(f"{key} is {rng.randrange(100)} says {m.name} #{day}", "decision",
                              key=key, supersede_reason=f"{m.name} measured again")
            self.expected_records.add(made.id)
            self.tally.records_written += 1
        active = [h for h in p.list_memories(limit=100) if not h.meta.get("key")]
        if active and rng.random() < 0.5:
            self.tick()
            p.set_memory_status(rng.choice(active).id, "resolved", reason=f"{m.name} fixed it")
        if active:
            self.tick()
            # the oldest few: what every member sees, so two of them often tag one note
            target = sorted(active, key=lambda h: h.id)[: 4]
            p.update_memory(rng.choice(target).id, add_tags=[f"seen-by-{m.name}"])
        self.tick()
        self.hand_edit(m, day)

    def hand_edit(self, m: Member, day: int) -> None:
        vault = m.project.vault
        notes = sorted(vault.note_paths())
        if not notes:
            return
        path = self.rng.choice(notes)
        text = path.read_text(encoding="utf-8")
        if "<<<<<<<" in text:
            return
        try:
            note_id = str(Document.parse(text).frontmatter.data.get("id") or path.stem)
        except OcmError:
            return
        line = f"- hand note by {m.name} on day {day} #{self.rng.randrange(10**6)}"
        path.write_text(text.rstrip("\n") + "\n" + line + "\n", encoding="utf-8")
        self.expected_lines.append((note_id, line))
        self.tally.bullets_written += 1

    # -- git ----------------------------------------------------------------------------
    def commit(self, m: Member) -> None:
        git(m.root, "add", "-A")
        if git(m.root, "status", "--porcelain").stdout.strip():
            git(m.root, "commit", "-q", "-m", f"{m.name}: notes")

    def pull_push(self, m: Member, timed: bool = False) -> None:
        rebase = self.rng.random() < 0.5
        started = time.perf_counter()
        done = git(m.root, "pull", "-q", "--rebase" if rebase else "--no-rebase", "origin",
                   "main", check=False)
        self.tally.pulls += 1
        self.tally.rebases += rebase
        self.tally.merges += not rebase
        if done.returncode != 0:
            self.person_resolves(m, rebase)
        m.project.search(QUERIES[0])
        self.tally.repairs += sum("active memories after a merge" in n or "cycle" in n
                                  for n in m.project.notices)
        m.project.notices.clear()
        if timed:
            self.tally.pull_search_ms.append((time.perf_counter() - started) * 1000)
        self.count_double_keys(m)
        self.commit(m)  # what the read repaired
        pushed = git(m.root, "push", "-q", "origin", "main", check=False)
        if pushed.returncode != 0:  # someone pushed meanwhile: pull again
            self.pull_push(m)

    def person_resolves(self, m: Member, rebase: bool) -> None:
        """A conflict ocm did not resolve: count it, then take our side as a hurried person
        would (what that loses shows up in the lost counts)."""
        while True:
            files = git(m.root, "diff", "--name-only", "--diff-filter=U").stdout.split()
            if not files:
                break
            self.tally.conflicts += 1
            self.tally.conflicted_files += len(files)
            for rel in files:
                git(m.root, "checkout", "--ours" if not rebase else "--theirs", "--", rel,
                    check=False)
                git(m.root, "add", "--", rel)
            env = {**os.environ, "GIT_EDITOR": "true"}
            step = subprocess.run(["git", "rebase", "--continue"] if rebase else
                                  ["git", "commit", "-q", "--no-edit"], cwd=m.root,
                                  capture_output=True, text=True, env=env, check=False)
            if step.returncode != 0 and not rebase:
                break

    def count_double_keys(self, m: Member) -> None:
        active: dict[str, int] = {}
        for _, note in m.project.vault.memory_notes():
            if note.key and note.status == "active":
                active[note.key] = active.get(note.key, 0) + 1
        self.tally.double_active_keys += sum(1 for n in active.values() if n > 1)

    # -- the run ------------------------------------------------------------------------
    def run(self, days: int) -> Tally:
        started = time.perf_counter()
        for day in range(days):
            self.clock = self.clock.replace(hour=9, minute=0) + timedelta(days=1)
            order = self.members[:]
            self.rng.shuffle(order)
            for m in order:
                self.work(m, day)
                self.commit(m)
            self.rng.shuffle(order)
            for m in order:
                self.pull_push(m, timed=day == days - 1)
            self.tally.days += 1
            if self.progress and self.tally.days % self.progress == 0:
                print(json.dumps(summary(self.tally, self.mode, len(self.members))),
                      file=sys.stderr, flush=True)
        for _ in range(2):  # everyone pulls what the others pushed last
            for m in self.members:
                self.pull_push(m, timed=True)
        self.check_final()
        self.tally.seconds = time.perf_counter() - started
        return self.tally

    def check_final(self) -> None:
        answers, trees = [], []
        for m in self.members:
            p = m.project
            answers.append([[h.id for h in p.search(q)] for q in QUERIES] +
                           [[h.id for h in p.list_memories(limit=100)]])
            trees.append(git(m.root, "rev-parse", "HEAD^{tree}").stdout.strip())
            broken = p.status()["broken_notes"]
            self.tally.unreadable_notes = max(self.tally.unreadable_notes, len(broken))
            texts = {}
            for path in p.vault.note_paths():
                text = path.read_text(encoding="utf-8")
                try:
                    note_id = str(Document.parse(text).frontmatter.data.get("id") or path.stem)
                except OcmError:
                    note_id = path.stem
                texts[note_id] = texts.get(note_id, "") + text
            memory_ids = {path.stem for path in p.vault.memories_dir.rglob("*.md")}
            self.tally.lost_records += len(self.expected_records - memory_ids)
            self.tally.lost_bullets += sum(1 for note_id, line in self.expected_lines
                                           if line not in texts.get(note_id, ""))
        self.tally.identical_answers = all(a == answers[0] for a in answers)
        sets = [[sorted(ids) for ids in a] for a in answers]
        self.tally.identical_result_sets = all(s == sets[0] for s in sets)
        self.tally.identical_notes = len(set(trees)) == 1 and not any(
            git(m.root, "status", "--porcelain").stdout.strip() for m in self.members)
        self.tally.notes_final = sum(1 for _ in self.members[0].project.vault.note_paths())


def summary(t: Tally, mode: str, members: int) -> dict:
    times = t.pull_search_ms
    return {
        "mode": mode, "members": members, "days": t.days, "pulls": t.pulls,
        "merges": t.merges, "rebases": t.rebases,
        "conflicts_needing_a_person": t.conflicts, "conflicted_files": t.conflicted_files,
        "unreadable_notes": t.unreadable_notes, "records_written": t.records_written,
        "bullets_written": t.bullets_written, "lost_records": t.lost_records,
        "lost_bullets": t.lost_bullets, "keys_with_two_active_after_read": t.double_active_keys,
        "repairs_on_read": t.repairs, "identical_search_answers": t.identical_answers,
        "identical_result_sets": t.identical_result_sets,
        "identical_notes": t.identical_notes, "notes_final": t.notes_final,
        "pull_and_search_ms_median": round(statistics.median(times), 1) if times else None,
        "pull_and_search_ms_max": round(max(times), 1) if times else None,
        "seconds": round(t.seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=200)
    parser.add_argument("--members", type=int, default=3, choices=range(2, len(NAMES) + 1))
    parser.add_argument("--mode", choices=("driver", "union", "text"), default="driver")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--progress", type=int, default=0, metavar="DAYS",
                        help="Print the running figures to stderr every DAYS days.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ocm-team-") as tmp:
        os.environ["OCM_HOME"] = str(Path(tmp) / "home")
        sim = Simulation(Path(tmp), args.members, args.mode, args.seed)
        sim.progress = args.progress
        figures = summary(sim.run(args.days), args.mode, args.members)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:34} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
