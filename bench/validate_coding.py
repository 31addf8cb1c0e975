"""Consistency checks for the hand-written coding-memory set (bench/data/coding).

Usage: python bench/validate_coding.py [--data DIR]

Exits non-zero and lists every problem found; prints a short summary when clean.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import frontmatter
import yaml

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "coding"

MEMORY_TYPES = {
    "gotcha", "decision", "bug_fix", "discovery", "trade_off", "procedure", "principle",
    "preference", "lesson", "context", "reference", "identity",
}
STATUSES = {"active", "resolved", "superseded", "archived"}
TOOLS = {"claude-code", "cursor", "codex", "gemini"}
CATEGORIES = {
    "resume_session", "file_gotcha", "superseded", "resolved", "identifier", "date", "tool",
    "decision", "general",
}
SESSION_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})_([a-z-]+?)_([a-z0-9-]+)$")
MIN_NOTES = 60
MIN_QUERIES = 40


def _as_dt(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def validate(data: Path) -> tuple[list[str], dict[str, object]]:
    """Return (problems, summary) for the set rooted at `data`."""
    problems: list[str] = []
    vault = data / "vault"
    notes: dict[str, dict] = {}
    kinds: Counter[str] = Counter()
    mem_types: Counter[str] = Counter()
    statuses: Counter[str] = Counter()

    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault)
        try:
            post = frontmatter.load(path)
        except (yaml.YAMLError, ValueError) as exc:
            problems.append(f"{rel}: frontmatter does not parse: {exc}")
            continue
        meta = dict(post.metadata)
        nid = meta.get("id")
        if not isinstance(nid, str) or not nid:
            problems.append(f"{rel}: missing id")
            continue
        if nid in notes:
            problems.append(f"{rel}: duplicate id {nid}")
        if nid != path.stem:
            problems.append(f"{rel}: id {nid!r} != filename stem {path.stem!r}")
        if not post.content.strip():
            problems.append(f"{rel}: empty body")

        if rel.parts[0] == "sessions":
            kinds["session"] += 1
            m = SESSION_NAME.match(path.stem)
            if not m:
                problems.append(f"{rel}: session filename not <date>_<HH-MM>_<tool>_<slug>")
            else:
                date, hh, mm, tool, slug = m.groups()
                started = _as_dt(meta.get("started_at"))
                if started is None or started.strftime("%Y-%m-%d_%H-%M") != f"{date}_{hh}-{mm}":
                    problems.append(f"{rel}: started_at does not match the filename")
                if meta.get("tool") != tool or tool not in TOOLS:
                    problems.append(f"{rel}: tool {meta.get('tool')!r} vs filename {tool!r}")
                if meta.get("slug") != slug:
                    problems.append(f"{rel}: slug {meta.get('slug')!r} vs filename {slug!r}")
            if meta.get("status") not in ("open", "closed"):
                problems.append(f"{rel}: session status {meta.get('status')!r}")
            ended = _as_dt(meta.get("ended_at"))
            started = _as_dt(meta.get("started_at"))
            if ended and started and ended < started:
                problems.append(f"{rel}: ended_at before started_at")
            if "## Goal" not in post.content:
                problems.append(f"{rel}: no ## Goal section")
            meta["_kind"] = "session"
        elif rel.parts[0] == "memories":
            kinds["memory"] += 1
            mtype = meta.get("type")
            if mtype not in MEMORY_TYPES:
                problems.append(f"{rel}: unknown type {mtype!r}")
            elif rel.parts[1] != mtype:
                problems.append(f"{rel}: stored under {rel.parts[1]}/ but type is {mtype}")
            status = meta.get("status")
            if status not in STATUSES:
                problems.append(f"{rel}: unknown status {status!r}")
            for key in ("title", "created", "updated"):
                if not meta.get(key):
                    problems.append(f"{rel}: missing {key}")
            if _as_dt(meta.get("created")) is None:
                problems.append(f"{rel}: created is not a datetime")
            if status == "resolved" and not meta.get("resolution"):
                problems.append(f"{rel}: resolved without resolution")
            if status == "superseded" and not meta.get("superseded_by"):
                problems.append(f"{rel}: superseded without superseded_by")
            mem_types[str(mtype)] += 1
            statuses[str(status)] += 1
            meta["_kind"] = "memory"
        else:
            problems.append(f"{rel}: not under sessions/ or memories/")
            continue
        notes[nid] = meta

    # Links are checked after all notes are loaded so order of files does not matter.
    chains = 0
    for nid, meta in notes.items():
        if meta["_kind"] != "memory":
            continue
        sess = meta.get("session")
        if sess and (sess not in notes or notes[sess]["_kind"] != "session"):
            problems.append(f"{nid}: session {sess!r} does not exist")
        new = meta.get("superseded_by")
        if new:
            if new not in notes:
                problems.append(f"{nid}: superseded_by {new!r} does not exist")
            elif notes[new].get("supersedes") != nid:
                problems.append(f"{nid}: {new} does not point back with supersedes")
            if meta.get("status") != "superseded":
                problems.append(f"{nid}: has superseded_by but status {meta.get('status')}")
        old = meta.get("supersedes")
        if old:
            chains += 1
            if old not in notes:
                problems.append(f"{nid}: supersedes {old!r} does not exist")
            elif notes[old].get("superseded_by") != nid:
                problems.append(f"{nid}: {old} does not point back with superseded_by")

    queries: list[dict] = []
    qpath = data / "queries.jsonl"
    for n, line in enumerate(qpath.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"queries.jsonl:{n}: {exc}")
            continue
        if not q.get("id") or not q.get("text"):
            problems.append(f"queries.jsonl:{n}: missing id or text")
        if q.get("category") not in CATEGORIES:
            problems.append(f"queries.jsonl:{n}: unknown category {q.get('category')!r}")
        queries.append(q)
    qids = Counter(q.get("id") for q in queries)
    problems += [f"queries.jsonl: duplicate id {k}" for k, c in qids.items() if c > 1]

    relevant: dict[str, set[str]] = {}
    for n, line in enumerate((data / "qrels.tsv").read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[2] != "1":
            problems.append(f"qrels.tsv:{n}: expected query_id<TAB>doc_id<TAB>1")
            continue
        qid, did, _ = parts
        if qid not in qids:
            problems.append(f"qrels.tsv:{n}: unknown query {qid}")
        if did not in notes:
            problems.append(f"qrels.tsv:{n}: unknown doc {did}")
        elif notes[did].get("status") in ("superseded", "resolved", "archived"):
            problems.append(f"qrels.tsv:{n}: {did} is {notes[did]['status']} but marked relevant")
        relevant.setdefault(qid, set()).add(did)
    problems += [f"query {q['id']} has no relevant docs" for q in queries
                 if q.get("id") not in relevant]

    meta_path = data / "meta.json"
    try:
        now = datetime.fromisoformat(json.loads(meta_path.read_text())["now"])
    except (OSError, KeyError, ValueError) as exc:
        problems.append(f"meta.json: no usable 'now': {exc}")
        now = None
    if now is not None:
        late = [nid for nid, m in notes.items()
                if (_as_dt(m.get("started_at") or m.get("created")) or now) > now]
        problems += [f"{nid}: dated after meta.now" for nid in late]

    total = kinds["session"] + kinds["memory"]
    if total < MIN_NOTES:
        problems.append(f"only {total} notes (< {MIN_NOTES})")
    if len(queries) < MIN_QUERIES:
        problems.append(f"only {len(queries)} queries (< {MIN_QUERIES})")

    summary: dict[str, object] = {
        "sessions": kinds["session"],
        "memories": kinds["memory"],
        "memory_types": dict(sorted(mem_types.items())),
        "memory_statuses": dict(sorted(statuses.items())),
        "supersede_links": chains,
        "queries": len(queries),
        "queries_per_category": dict(sorted(Counter(q.get("category") for q in queries).items())),
        "qrels": sum(len(v) for v in relevant.values()),
    }
    return problems, summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    problems, summary = validate(args.data)
    for p in problems:
        print(f"ERROR {p}")
    print(json.dumps(summary, indent=2))
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
