"""Auto-supersede precision and recall on labelled pairs (no embeddings, no LLM).

    python bench/supersede.py            # measure the shipped thresholds
    python bench/supersede.py --tune     # grid-search thresholds on the `tune` split

Each line of `bench/data/coding/supersede_pairs.jsonl` is an older and a newer memory of the
same type, labelled `supersede` (the newer restates the older with an update) or `keep`
(a look-alike about something else; both must stay active). Pairs alternate between a
`tune` split (thresholds chosen there) and a held-out `test` split; both are reported.
The measure goes through the product's own write path: every pair is written to a fresh
vault with `Project.remember` and we read back whether the older record was superseded.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ocm.vault import supersede  # noqa: E402

PAIRS = ROOT / "bench" / "data" / "coding" / "supersede_pairs.jsonl"
MIN_PRECISION = 0.95


def load() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def predict(pair: dict, thresholds: tuple[float, float] | None = None) -> tuple[bool, float]:
    old, new = pair["old"], pair["new"]
    decision = supersede.judge(old["title"], old["content"], old["files"], new["title"],
                               new["content"], new["files"], thresholds)
    return decision.supersede, decision.score


def scores(pairs: list[dict], predictions: list[bool]) -> dict[str, float]:
    tp = sum(p and x["label"] == "supersede" for x, p in zip(pairs, predictions, strict=True))
    fp = sum(p and x["label"] == "keep" for x, p in zip(pairs, predictions, strict=True))
    fn = sum(not p and x["label"] == "supersede" for x, p in zip(pairs, predictions,
                                                                 strict=True))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"pairs": len(pairs), "tp": tp, "fp": fp, "fn": fn,
            "precision": round(precision, 3), "recall": round(recall, 3)}


def tune(pairs: list[dict]) -> tuple[float, float]:
    """Per threshold (pairs sharing a file, pairs not sharing one): the highest recall with
    precision >= MIN_PRECISION, and among the thresholds that reach it the median one (the
    middle of the gap between look-alikes and duplicates, not its edge)."""
    grid = [round(0.30 + 0.01 * i, 2) for i in range(66)]
    chosen = []
    for shared in (True, False):
        subset = [p for p in pairs
                  if supersede.shared_files(p["old"]["files"], p["new"]["files"]) == shared]
        feasible: list[tuple[float, float]] = []
        for value in grid:
            s = scores(subset, [predict(p, (value, value))[0] for p in subset])
            if s["precision"] >= MIN_PRECISION:
                feasible.append((s["recall"], value))
        best = max(r for r, _ in feasible)
        tied = sorted(v for r, v in feasible if r == best)
        chosen.append(tied[len(tied) // 2])
    return chosen[0], max(chosen[1], chosen[0])  # never looser without a shared file


def through_the_product(pairs: list[dict]) -> list[bool]:
    """Write each pair with Project.remember in a fresh vault; was the old one superseded?"""
    import os

    from ocm.project import Project

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OCM_HOME"] = str(Path(tmp) / "home")
        for pair in pairs:
            vault = Path(tmp) / pair["id"] / ".openCodeMemory"
            project = Project.open(vault=vault, cwd=tmp)
            old = project.remember(pair["old"]["content"], pair["type"],
                                   title=pair["old"]["title"], files=pair["old"]["files"])
            new = project.remember(pair["new"]["content"], pair["type"],
                                   title=pair["new"]["title"], files=pair["new"]["files"])
            out.append(bool(new.notice and old.id in new.notice))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args()
    pairs = load()
    chosen = (supersede.THRESHOLD_SHARED_FILE, supersede.THRESHOLD_NO_SHARED_FILE)
    if args.tune:
        chosen = tune([p for p in pairs if p["split"] == "tune"])
        print(f"tuned thresholds: shared file {chosen[0]}, no shared file {chosen[1]}")
    report = {}
    for name in ("tune", "test", "all"):
        subset = [p for p in pairs if name == "all" or p["split"] == name]
        report[name] = scores(subset, [predict(p, chosen)[0] for p in subset])
    report["product_path_all"] = scores(pairs, through_the_product(pairs)) if not (
        args.tune) else None
    print(json.dumps({"thresholds": {"shared_file": chosen[0], "no_shared_file": chosen[1]},
                      **report}, indent=2))
    if args.verbose:
        for p in pairs:
            hit, score = predict(p, chosen)
            flag = "" if hit == (p["label"] == "supersede") else "  <-- wrong"
            print(f"{p['id']} {p['label']:<9} {score:.3f} "
                  f"{'shared' if supersede.shared_files(p['old']['files'], p['new']['files']) else '      '}"  # noqa: E501
                  f" {p['new']['title'][:50]}{flag}")


if __name__ == "__main__":
    main()
