"""Retrieval benchmark: how well `ocm` search finds the right note.

Usage: python bench/retrieval.py --data DIR [--json] [--limit-groups N]

DIR is either
* an eval set (`corpus.jsonl`, `queries.jsonl`, `qrels.tsv`; see /work/shared/eval/README.md):
  one fresh vault per `group`, every document written through `Project.remember()`, each
  query searched only in its own group's vault with "now" pinned to the group's latest
  document date; or
* a coding set (`vault/`, `queries.jsonl`, `qrels.tsv`, `meta.json`, e.g. bench/data/coding):
  the vault is copied to a temp folder and searched with now = meta.now.

Metrics: nDCG@10 (binary gains, log2 discount), Recall@1/5/10, MRR@10, and wall time of the
search call only (index building is excluded by one warm-up search per vault first).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
# `set` names are reported relative to this root so results from different machines compare.
EVAL_ROOT = Path(os.environ.get("OCM_EVAL_ROOT", "/work/shared/eval"))
K = 10
TOP_LEAK = 3
HIDDEN_STATUSES = ("superseded", "resolved", "archived")
# Groups without a single dated document still need a deterministic "now".
FALLBACK_NOW = datetime(2024, 1, 1)

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------
def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_qrels(path: Path) -> dict[str, set[str]]:
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 3 and float(parts[2]) > 0:
            qrels[parts[0]].add(parts[1])
    return dict(qrels)


def parse_date(value: object) -> datetime | None:
    """ISO 8601 -> naive datetime; aware stamps become naive UTC so all compare cleanly."""
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is not None:
        stamp = (stamp - stamp.utcoffset()).replace(tzinfo=None)  # type: ignore[operator]
    return stamp


def detect_format(data: Path) -> str:
    if (data / "corpus.jsonl").is_file():
        return "eval"
    if (data / "vault").is_dir() and (data / "meta.json").is_file():
        return "coding"
    raise SystemExit(f"{data}: neither an eval set (corpus.jsonl) nor a coding set (vault/)")


def set_name(data: Path) -> str:
    data = data.resolve()
    try:
        return data.relative_to(EVAL_ROOT.resolve()).as_posix()
    except ValueError:
        return data.name


# --------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------
def dedupe(ids: Iterable[str]) -> list[str]:
    """First occurrence wins: several hits on one note must not count twice."""
    seen: set[str] = set()
    out = []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def query_metrics(ranked: list[str], relevant: set[str], k: int = K) -> dict[str, float]:
    top = ranked[:k]
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(top) if d in relevant)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    rr = next((1.0 / (i + 1) for i, d in enumerate(top) if d in relevant), 0.0)
    n = len(relevant) or 1
    return {
        f"ndcg@{k}": dcg / idcg if idcg else 0.0,
        "recall@1": len(set(ranked[:1]) & relevant) / n,
        "recall@5": len(set(ranked[:5]) & relevant) / n,
        f"recall@{k}": len(set(top) & relevant) / n,
        f"mrr@{k}": rr,
    }


METRIC_KEYS = (f"ndcg@{K}", "recall@1", "recall@5", f"recall@{K}", f"mrr@{K}")


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]  # nearest-rank


@dataclass
class QueryResult:
    id: str
    text: str
    category: str | None
    relevant: set[str]
    ranked: list[str]
    ms: float
    metrics: dict[str, float]
    leaks: list[tuple[str, str]] = field(default_factory=list)  # (doc id, status) in top 3


@dataclass
class RunResult:
    set: str
    queries: list[QueryResult]
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"set": self.set, "queries": len(self.queries)}
        out.update(aggregate(self.queries))
        out.update(self.extra)
        cats = sorted({q.category for q in self.queries if q.category is not None})
        if cats:
            out["per_category"] = {
                c: {"queries": len(qs), **aggregate(qs, timing=False)}
                for c in cats
                for qs in [[q for q in self.queries if q.category == c]]
            }
        return out


def aggregate(queries: list[QueryResult], timing: bool = True) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in METRIC_KEYS:
        out[key] = round(statistics.fmean(q.metrics[key] for q in queries), 4) if queries else 0.0
    if timing:
        times = [q.ms for q in queries]
        out["ms_per_query_mean"] = round(statistics.fmean(times), 2) if times else 0.0
        out["ms_per_query_p95"] = round(p95(times), 2)
    return out


# --------------------------------------------------------------------------------------------
# Product adapter: the only place that knows the `ocm` API.
# --------------------------------------------------------------------------------------------
def open_project(vault: Path) -> Any:
    from ocm.project import Project

    return Project.open(vault=vault, cwd=vault.parent)


def remember(project: Any, *, content: str, title: str | None, created: datetime | None,
             files: list[str] | None) -> str:
    return str(project.remember(content, "context", title=title or None, files=files or None,
                                created=created).id)


def search(project: Any, text: str, now: datetime) -> list[Any]:
    return list(project.search(text, now=now))


def hit_id(hit: Any) -> str:
    return str(hit.id)


def timed_search(project: Any, text: str, now: datetime) -> tuple[list[str], float]:
    start = time.perf_counter()
    hits = search(project, text, now)
    ms = (time.perf_counter() - start) * 1000.0
    return [hit_id(h) for h in hits], ms


# --------------------------------------------------------------------------------------------
# Eval format
# --------------------------------------------------------------------------------------------
SPLIT_PATHS = re.compile(r"[\s,]+")


def is_swebench(data: Path, docs: list[dict[str, Any]]) -> bool:
    return "swebench" in data.resolve().as_posix() or any(
        "instance_id" in (d.get("meta") or {}) for d in docs[:5])


def doc_files(doc: dict[str, Any]) -> list[str]:
    return [p for p in SPLIT_PATHS.split(doc.get("title") or "") if p]


def fill_vault(project: Any, gdocs: list[dict[str, Any]], dates: list[datetime | None],
               now: datetime, swe: bool) -> dict[str, str]:
    """Write one group's documents through the product; note id -> document id."""
    to_doc: dict[str, str] = {}
    for doc, date in zip(gdocs, dates, strict=True):
        # Undated docs (most of SWE-bench) are treated as current so the missing date
        # neither helps nor hurts them relative to the newest dated ones.
        new_id = remember(project, content=doc.get("text") or doc.get("title") or "",
                          title=doc.get("title"), created=date or now,
                          files=doc_files(doc) if swe else None)
        to_doc[new_id] = str(doc["id"])
    return to_doc


def run_eval(data: Path, limit_groups: int | None = None,
             log: Callable[[str], None] | None = None) -> RunResult:
    docs = load_jsonl(data / "corpus.jsonl")
    queries = load_jsonl(data / "queries.jsonl")
    qrels = load_qrels(data / "qrels.tsv")
    swe = is_swebench(data, docs)

    groups: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        groups.setdefault(str(d.get("group")), []).append(d)
    names = list(groups)[:limit_groups] if limit_groups else list(groups)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        by_group[str(q.get("group"))].append(q)

    results: list[QueryResult] = []
    for name in names:
        gdocs = groups[name]
        dates = [parse_date(d.get("date")) for d in gdocs]
        known = [x for x in dates if x is not None]
        now = max(known) if known else FALLBACK_NOW
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ocm-bench-") as tmp:
            project = open_project(Path(tmp) / "vault")
            to_doc = fill_vault(project, gdocs, dates, now, swe)
            gqueries = [q for q in by_group.get(name, []) if q["id"] in qrels]
            if gqueries:
                search(project, gqueries[0]["text"], now)  # warm-up: builds/opens the index
            for q in gqueries:
                ids, ms = timed_search(project, q["text"], now)
                ranked = dedupe(to_doc.get(i, i) for i in ids)
                rel = qrels[q["id"]]
                results.append(QueryResult(
                    q["id"], q["text"], q.get("category_name") or _cat(q.get("category")),
                    rel, ranked, ms, query_metrics(ranked, rel)))
        if log:
            log(f"  {name}: {len(gdocs)} docs, {len(gqueries)} queries, "
                f"{time.perf_counter() - t0:.1f}s")
    return RunResult(set_name(data), results)


def _cat(value: object) -> str | None:
    return None if value is None else str(value)


# --------------------------------------------------------------------------------------------
# Coding format
# --------------------------------------------------------------------------------------------
def read_vault_status(vault: Path) -> dict[str, dict[str, Any]]:
    """Ground-truth frontmatter per note id, read independently of the product."""
    import frontmatter

    notes: dict[str, dict[str, Any]] = {}
    for path in vault.rglob("*.md"):
        meta = frontmatter.load(path).metadata
        if meta.get("id"):
            notes[str(meta["id"])] = dict(meta)
    return notes


def find_leaks(top: list[str], relevant: set[str],
               notes: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Hidden-status notes in the top 3 while something better exists: its replacement (via
    superseded_by) is in the vault, or the query has any relevant doc."""
    leaks = []
    for doc in top[:TOP_LEAK]:
        meta = notes.get(doc) or {}
        status = str(meta.get("status") or "")
        if status not in HIDDEN_STATUSES:
            continue
        replacement = meta.get("superseded_by")
        if (replacement and str(replacement) in notes) or relevant:
            leaks.append((doc, status))
    return leaks


def run_coding(data: Path) -> RunResult:
    meta = json.loads((data / "meta.json").read_text(encoding="utf-8"))
    now = parse_date(meta["now"])
    assert now is not None, "meta.json: 'now' must be an ISO timestamp"
    queries = load_jsonl(data / "queries.jsonl")
    qrels = load_qrels(data / "qrels.tsv")
    notes = read_vault_status(data / "vault")

    results: list[QueryResult] = []
    with tempfile.TemporaryDirectory(prefix="ocm-bench-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(data / "vault", vault)
        project = open_project(vault)
        if queries:
            search(project, queries[0]["text"], now)  # warm-up: builds the index
        for q in queries:
            rel = qrels.get(q["id"], set())
            ids, ms = timed_search(project, q["text"], now)
            ranked = dedupe(ids)
            results.append(QueryResult(q["id"], q["text"], q.get("category"), rel, ranked, ms,
                                       query_metrics(ranked, rel),
                                       find_leaks(ranked, rel, notes)))
    leaks = sum(1 for r in results if r.leaks)
    return RunResult(set_name(data), results, {"leaks_top3": leaks})


@contextmanager
def isolated_user_vault() -> Iterator[None]:
    """Project searches also read the user-scope vault ($OCM_HOME); point it at an empty
    folder so a developer's own notes never leak into benchmark results."""
    saved = {k: os.environ.get(k) for k in ("OCM_HOME", "OCM_VAULT", "OCM_NOW")}
    with tempfile.TemporaryDirectory(prefix="ocm-bench-home-") as home:
        os.environ["OCM_HOME"] = home
        os.environ.pop("OCM_VAULT", None)
        os.environ.pop("OCM_NOW", None)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def run(data: Path, limit_groups: int | None = None,
        log: Callable[[str], None] | None = None) -> RunResult:
    with isolated_user_vault():
        if detect_format(data) == "coding":
            return run_coding(data)
        return run_eval(data, limit_groups, log)


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------
def format_table(result: RunResult, show_misses: bool = False) -> str:
    s = result.summary()
    cols = ("queries", *METRIC_KEYS)
    lines = [f"set: {s['set']}", ""]
    head = f"{'':<16}" + "".join(f"{c:>10}" for c in cols)
    lines.append(head)
    lines.append("-" * len(head))

    def row(label: str, d: dict[str, Any]) -> str:
        cells = "".join(
            f"{d[c]:>10}" if c == "queries" else f"{d[c]:>10.3f}" for c in cols)
        return f"{label[:16]:<16}{cells}"

    lines.append(row("all", s))
    for cat, d in (s.get("per_category") or {}).items():
        lines.append(row(cat, d))
    lines.append("")
    lines.append(f"ms/query: mean {s['ms_per_query_mean']:.2f}, p95 {s['ms_per_query_p95']:.2f}")
    if "leaks_top3" in s:
        lines.append(f"leaks_top3: {s['leaks_top3']}")
        for q in result.queries:
            for doc, status in q.leaks:
                lines.append(f"  {q.id} {q.text!r}: {doc} ({status})")
    if show_misses:
        lines.append("")
        lines.append("queries with nDCG@10 < 1:")
        for q in result.queries:
            if q.metrics[f"ndcg@{K}"] < 1.0:
                lines.append(f"  {q.id} [{q.category}] {q.metrics[f'ndcg@{K}']:.2f} {q.text!r}")
                lines.append(f"      want: {sorted(q.relevant)}")
                lines.append(f"      got:  {q.ranked[:5]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="ocm retrieval benchmark")
    ap.add_argument("--data", type=Path, required=True, help="eval set or coding set folder")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--limit-groups", type=int, default=None, metavar="N",
                    help="eval sets: only the first N groups")
    ap.add_argument("--misses", action="store_true",
                    help="table output: list queries that are not ranked perfectly")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    result = run(args.data, args.limit_groups, log)
    if args.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print(format_table(result, show_misses=args.misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
