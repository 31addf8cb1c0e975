"""Abstention benchmark (issue #26): does a search answer with nothing when the vault holds
nothing on topic, and does it still answer in-group?

Usage: python bench/abstain.py [--data DIR ...] [--cross N] [--json] [--dump FILE]
       python bench/abstain.py --calibrate DUMP

For each eval set (dev splits, default: every set under /work/shared/eval/) one vault per
group is built through `Project.remember` (as bench/retrieval.py does); in it are searched

* the group's own queries: nDCG@10 (binary gains) and the share answered (≥ 1 hit);
* up to N queries of every OTHER group (`--cross`, default 10, the first N in file order):
  nothing there is relevant, so the right answer is none. Reported: the share answered
  with nothing.

`--dump FILE` writes one JSON line per search with each hit's features (matched, cosine,
similarity, coverage, mass, score share, relevant); with `--thresholds-off` every
candidate is kept (for calibrating the thresholds). `--calibrate DUMP` prints the confidence
table (ocm/indexer/confidence.py) from the in-group hits of a dump made with the
thresholds on (dumps of several sets concatenated).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.retrieval import (  # noqa: E402
    EVAL_ROOT,
    FALLBACK_NOW,
    K,
    fill_vault,
    is_swebench,
    isolated_user_vault,
    load_jsonl,
    load_qrels,
    open_project,
    parse_date,
    query_metrics,
    set_name,
)
from ocm.indexer import ontopic, relevance  # noqa: E402

MIN_BIN = 30
SETS = ("locomo/session", "locomo/turn", "realtalk/session", "realtalk/turn", "swebench/patch")


def thresholds_off() -> None:
    """Every hit on topic (for --dump): the measures are still computed on each hit."""

    relevance.MIN_COSINE = relevance.MIN_COSINE_PARAGRAPH = -1.0
    relevance.MIN_SIMILARITY = relevance.MIN_SIMILARITY_PARAGRAPH = -1.0
    relevance.MIN_MASS = relevance.MIN_COVERAGE = relevance.MIN_FAMILIAR = 0.0
    ontopic.MIN_MENTIONS = sys.maxsize  # no imported package is another project's


class ProjectCost:
    """CPU seconds spent in `ontopic.project` (whose project a pasted paragraph is about)
    and how many paragraphs it judged, while installed."""

    def __init__(self) -> None:
        self.seconds, self.calls = 0.0, 0
        self._project = ontopic.project

    def __enter__(self) -> ProjectCost:
        def timed(scorer: Any, text: str, fields: tuple[str, ...]) -> str | None:
            start = time.process_time()
            try:
                return self._project(scorer, text, fields)
            finally:
                self.seconds += time.process_time() - start
                self.calls += 1

        ontopic.project = timed
        return self

    def __exit__(self, *exc: object) -> None:
        ontopic.project = self._project


def features(hit: Any, top: float, relevant: set[str], to_doc: dict[str, str]) -> dict:
    return {"doc": to_doc.get(hit.id, hit.id), "rel": to_doc.get(hit.id, hit.id) in relevant,
            "matched": hit.matched, "confidence": hit.confidence,
            "share": round(hit.score / top, 4) if top else 0.0,
            "cosine": hit.cosine, "similarity": hit.similarity, "coverage": hit.coverage,
            "mass": hit.mass, "idents": hit.idents, "bm25": round(hit.bm25, 4), "close": hit.close}


def run_set(data: Path, cross: int, dump: Any = None) -> dict[str, Any]:
    docs = load_jsonl(data / "corpus.jsonl")
    queries = load_jsonl(data / "queries.jsonl")
    qrels = load_qrels(data / "qrels.tsv")
    swe = is_swebench(data, docs)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in docs:
        groups[str(d.get("group"))].append(d)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        if q["id"] in qrels:
            by_group[str(q.get("group"))].append(q)
    ndcg: list[float] = []
    answered: list[bool] = []
    nothing: list[bool] = []
    cost = ProjectCost()
    for name, gdocs in groups.items():
        dates = [parse_date(d.get("date")) for d in gdocs]
        known = [x for x in dates if x is not None]
        now = max(known) if known else FALLBACK_NOW
        with tempfile.TemporaryDirectory(prefix="ocm-abstain-") as tmp:
            project = open_project(Path(tmp) / "vault")
            to_doc = fill_vault(project, gdocs, dates, now, swe)
            own = by_group.get(name, [])
            others = [q for other, qs in by_group.items() if other != name for q in qs[:cross]]
            for q, in_group in [*((q, True) for q in own), *((q, False) for q in others)]:
                with cost:
                    hits = project.search(q["text"], now=now)
                rel = qrels[q["id"]] if in_group else set()
                if in_group:
                    ranked = list(dict.fromkeys(to_doc.get(h.id, h.id) for h in hits))
                    ndcg.append(query_metrics(ranked, rel)[f"ndcg@{K}"])
                    answered.append(bool(hits))
                else:
                    nothing.append(not hits)
                if dump is not None:
                    top = max((h.score for h in hits), default=0.0)
                    dump.write(json.dumps({
                        "set": set_name(data), "group": name, "query": q["id"],
                        "in_group": in_group, "phrase": len(q["text"].split()) <= 20,
                        "hits": [features(h, top, rel, to_doc) for h in hits]}) + "\n")
    return {"set": set_name(data), "in_group_queries": len(ndcg),
            f"in_group_ndcg@{K}": round(sum(ndcg) / len(ndcg), 4) if ndcg else 0.0,
            "in_group_answered": round(sum(answered) / len(answered), 4) if answered else 0.0,
            "cross_queries": len(nothing),
            "cross_nothing": round(sum(nothing) / len(nothing), 4) if nothing else 0.0,
            "project_cpu_ms": round(1000 * cost.seconds / cost.calls, 3) if cost.calls else None}


def calibrate(dump_path: Path) -> dict[str, list[tuple[int, float]]]:
    """matched -> per confidence.SHARES bin (hits, share relevant), from the in-group hits
    of every search in the dump (several sets' dumps may be concatenated)."""
    from ocm.indexer.confidence import SHARES, share_bin

    counts: dict[str, list[list[int]]] = {}
    for line in dump_path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not row["in_group"]:
            continue
        for hit in row["hits"]:
            bins = counts.setdefault(hit["matched"], [[0, 0] for _ in SHARES])
            at = share_bin(hit["share"])
            bins[at][0] += 1
            bins[at][1] += int(hit["rel"])
    out = {}
    for matched, bins in counts.items():
        hits = sum(n for n, _ in bins)
        overall = sum(r for _, r in bins) / hits if hits else 0.0
        # A bin of fewer than MIN_BIN hits says little: it takes its kind's overall share.
        out[matched] = [(n, round(r / n if n >= MIN_BIN else overall, 3)) for n, r in bins]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="ocm abstention benchmark")
    ap.add_argument("--data", type=Path, action="append",
                    help="eval set folder (repeatable; default: every dev set)")
    ap.add_argument("--cross", type=int, default=10,
                    help="queries of each other group searched in a vault")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dump", type=Path, help="write each search's hit features here")
    ap.add_argument("--thresholds-off", action="store_true",
                    help="with --dump: keep every candidate, to calibrate the thresholds")
    ap.add_argument("--calibrate", type=Path, metavar="DUMP",
                    help="print the confidence table of the in-group hits in DUMP and stop")
    args = ap.parse_args(argv)
    if args.calibrate:
        print(json.dumps(calibrate(args.calibrate)))
        return 0
    sets = args.data or [EVAL_ROOT / name / "dev" for name in SETS]
    if args.thresholds_off:
        thresholds_off()
    results = []
    with isolated_user_vault():
        dump = args.dump.open("w", encoding="utf-8") if args.dump else None
        try:
            for data in sets:
                start = time.perf_counter()
                result = run_set(data, args.cross, dump)
                result["seconds"] = round(time.perf_counter() - start, 1)
                results.append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
        finally:
            if dump is not None:
                dump.close()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print("| set | cross-group queries | answered with nothing | in-group nDCG@10 "
              "| in-group answered |")
        print("|---|---|---|---|---|")
        for r in results:
            print(f"| {r['set']} | {r['cross_queries']} | {r['cross_nothing']:.3f} "
                  f"| {r[f'in_group_ndcg@{K}']:.4f} | {r['in_group_answered']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
