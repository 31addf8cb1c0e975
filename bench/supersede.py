"""Auto-supersede precision and recall on labelled pairs (words, and meaning; no LLM).

    python bench/supersede.py             # measure the shipped thresholds
    python bench/supersede.py --tune      # grid-search thresholds on the `tune` split
    python bench/supersede.py --families  # the rules with meaning compared, tuned alike
    python bench/supersede.py --cost      # one-shot `ocm remember` with and without meaning
    python bench/supersede.py --replay    # every same-type pair of the coding vault judged
    OCM_SEMANTIC=0 python bench/supersede.py   # words only (the fallback)

Each line of `bench/data/coding/supersede_pairs.jsonl` is an older and a newer memory of the
same type, labelled `supersede` (the newer restates the older with an update) or `keep`
(a look-alike about something else; both must stay active). Pairs alternate between a
`tune` split (thresholds chosen there) and a held-out `test` split; both are reported.
Meaning is the cosine of the product's own embeddings (ocm/indexer/likeness.py).
The rules are reported apart: words (and meaning) alone, then with the plan-reported-done
route (ocm/vault/alike/plandone.py), whose action threshold is tuned after the others, on the
tune split too.
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

from ocm.indexer.likeness import Likeness  # noqa: E402
from ocm.vault.alike import plandone, supersede  # noqa: E402

PAIRS = ROOT / "bench" / "data" / "coding" / "supersede_pairs.jsonl"
MIN_PRECISION = 0.95
GRID = [round(0.30 + 0.01 * i, 2) for i in range(66)]
MEANING = Likeness(None)  # OCM_SEMANTIC=0: None, words only


def load() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def decide(pair: dict, thresholds: tuple[float, float] | None = None,
           with_meaning: float = supersede.THRESHOLD_WITH_MEANING,
           action: float = plandone.THRESHOLD_ACTION) -> supersede.Decision:
    old, new = pair["old"], pair["new"]
    return supersede.judge(old["title"], old["content"], old["files"], new["title"],
                           new["content"], new["files"], thresholds, MEANING,
                           with_meaning, action)


def predict(pair: dict, thresholds: tuple[float, float] | None = None,
            with_meaning: float = supersede.THRESHOLD_WITH_MEANING) -> tuple[bool, float]:
    """Words and meaning, without the plan-reported-done route (tuned apart, after)."""
    decision = decide(pair, thresholds, with_meaning)
    return decision.alike, decision.score


def lexical_and_meaning(pair: dict) -> tuple[float, float, bool]:
    old, new = pair["old"], pair["new"]
    lexical = supersede.similarity(old["title"], old["content"], new["title"], new["content"])
    cos = MEANING(supersede.record_text(old["title"], old["content"]),
                  supersede.record_text(new["title"], new["content"]))
    return lexical, cos if cos is not None else 0.0, supersede.shared_files(
        old["files"], new["files"])


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
    chosen = []
    for shared in (True, False):
        subset = [p for p in pairs
                  if supersede.shared_files(p["old"]["files"], p["new"]["files"]) == shared]
        chosen.append(pick([((v,), [predict(p, (v, v), 2.0)[0] for p in subset])
                            for v in GRID], subset)[0])
    return chosen[0], max(chosen[1], chosen[0])  # never looser without a shared file


def pick(options: list[tuple[tuple[float, ...], list[bool]]], pairs: list[dict]
         ) -> tuple[float, ...]:
    """Among parameter settings (with their predictions on `pairs`): the highest recall at
    precision >= MIN_PRECISION, then the median of the settings that tie (grid order)."""
    feasible = []
    for params, predictions in options:
        s = scores(pairs, predictions)
        if s["precision"] >= MIN_PRECISION:
            feasible.append((s["recall"], params))
    best = max(r for r, _ in feasible)
    tied = [params for r, params in feasible if r == best]
    return tied[len(tied) // 2]


# Rules that add meaning to the shipped lexical rule, for records sharing a file only
# (on the no-shared-file side every duplicate is already caught by words). Each is tuned
# on the tune split by `pick` and then measured on both splits.
FAMILIES = {
    "meaning alone: cos >= C": (
        lambda lex, cos, c: cos >= c[0], [(c,) for c in GRID]),
    "both: lexical >= L and cos >= C": (
        lambda lex, cos, c: lex >= c[0] and cos >= c[1],
        [(lo, c) for lo in GRID for c in GRID]),
    "mean: (lexical + cos) / 2 >= M (shipped)": (
        lambda lex, cos, c: (lex + cos) / 2 >= c[0], [(m,) for m in GRID]),
}


def families(pairs: list[dict]) -> dict[str, dict]:
    lexical_hits = [predict(p, None, 2.0)[0] for p in pairs]
    measured = [lexical_and_meaning(p) for p in pairs]
    tune_rows = [i for i, p in enumerate(pairs) if p["split"] == "tune"]
    out = {}
    for name, (rule, grid) in FAMILIES.items():
        def run(params: tuple[float, ...], rows: list[int], rule=rule) -> list[bool]:
            return [lexical_hits[i] or (measured[i][2] and rule(*measured[i][:2], params))
                    for i in rows]

        chosen = pick([(params, run(params, tune_rows)) for params in grid],
                      [pairs[i] for i in tune_rows])
        out[name] = {"params": chosen}
        for split in ("tune", "test"):
            rows = [i for i, p in enumerate(pairs) if p["split"] == split]
            out[name][split] = scores([pairs[i] for i in rows], run(chosen, rows))
            out[name][split + "_false_positives"] = [
                pairs[i]["id"] for i, hit in zip(rows, run(chosen, rows), strict=True)
                if hit and pairs[i]["label"] == "keep"]
    return out


def tune_meaning(pairs: list[dict], thresholds: tuple[float, float]) -> float:
    """The mean threshold, on the tune split, with the lexical thresholds fixed."""
    return pick([((m,), [predict(p, thresholds, m)[0] for p in pairs]) for m in GRID],
                pairs)[0]


def tune_action(pairs: list[dict], thresholds: tuple[float, float], with_meaning: float
                ) -> float:
    """The plan-reported-done action threshold, on the tune split, the others fixed."""
    return pick([((a,), [decide(p, thresholds, with_meaning, a).supersede for p in pairs])
                 for a in GRID], pairs)[0]


def replay(meaning: bool = True) -> dict:
    """Every (older, newer) pair of records of one type in the coding vault, whatever their
    status, judged as a write of the newer would judge it: which rule would supersede, and
    whether the vault itself records the older as superseded by the newer."""
    from ocm.vault.folder import read_document
    from ocm.vault.memories import MemoryNote

    vault = ROOT / "bench" / "data" / "coding" / "vault" / "memories"
    notes = [MemoryNote(read_document(path)) for path in sorted(vault.rglob("*.md"))]
    notes.sort(key=lambda n: (n.type, str(n.created)))
    out: dict = {"records": len(notes), "pairs": 0, "sharing_a_file": 0, "alike": [],
                 "plan_reported_done": []}
    for i, new in enumerate(notes):
        for old in notes[:i]:
            if old.type != new.type or old.type in supersede.EXCLUDED_TYPES:
                continue
            out["pairs"] += 1
            out["sharing_a_file"] += supersede.shared_files(old.str_list("files"),
                                                            new.str_list("files"))
            decision = supersede.judge(old.title, old.content, old.str_list("files"),
                                       new.title, new.content, new.str_list("files"),
                                       meaning=MEANING if meaning else None)
            if not decision.supersede:
                continue
            row = {"old": old.id, "new": new.id, "old_status": old.status,
                   "recorded": old.superseded_by == new.id, "score": round(decision.score, 3)}
            if decision.alike:
                out["alike"].append(row)
            else:
                out["plan_reported_done"].append({**row, "done": decision.done})
    return out


def cross(pairs: list[dict]) -> dict:
    """A harder look-alike set for the plan-reported-done route: every record of the pairs
    file against every other (older -> newer, whatever their type), their files taken as
    shared. A fire counts as right only when the newer record is the newer side of a
    `supersede` pair whose older side says the same as the older record."""
    records = [(p, side, supersede.record_text(p[side]["title"], p[side]["content"]))
               for p in pairs for side in ("old", "new")]
    answers = {(supersede.record_text(p["old"]["title"], p["old"]["content"]), p["id"])
               for p in pairs if p["label"] == "supersede"}
    out: dict = {"ordered_pairs": 0, "right": 0, "wrong": []}
    for old_pair, _, old_text in records:
        for new_pair, new_side, new_text in records:
            if old_text == new_text:
                continue
            out["ordered_pairs"] += 1
            files = set(old_pair["old"]["files"]) | set(new_pair["new"]["files"])
            if not plandone.answered(old_text, new_text, files, MEANING):
                continue
            if new_side == "new" and (old_text, new_pair["id"]) in answers:
                out["right"] += 1
            else:
                out["wrong"].append(f"{old_pair['id']} -> {new_pair['id']}.{new_side}")
    return out


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


def cost(runs: int = 7) -> dict[str, float]:
    """Median wall time of a fresh `ocm remember` process writing p026's newer record next
    to its older one (meaning is asked: words 0.77 with a shared file), with meaning and
    with OCM_SEMANTIC=0, each in a fresh vault; "warm": after an `ocm search`, which leaves
    the tokenizer's table in the index folder, as any used vault has it."""
    import os
    import shutil
    import statistics
    import subprocess
    import time

    ocm = shutil.which("ocm", path=str(Path(sys.executable).parent)) or "ocm"
    row = next(p for p in load() if p["id"] == "p026")

    def args(record: dict) -> list[str]:
        files = [part for f in record["files"] for part in ("--file", f)]
        return [ocm, "remember", "--type", row["type"], "--title", record["title"], *files,
                record["content"]]

    out: dict[str, float] = {}
    for label, semantic, warm in (("with_meaning_ms", "1", False),
                                  ("with_meaning_warm_ms", "1", True),
                                  ("words_only_ms", "0", False)):
        times = []
        for run in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                env = {**os.environ, "OCM_HOME": f"{tmp}/home", "OCM_SEMANTIC": semantic}
                subprocess.run(["git", "init", "-q", tmp], check=True)
                subprocess.run([ocm, "init"], cwd=tmp, env=env, check=True,
                               capture_output=True)
                subprocess.run(args(row["old"]), cwd=tmp, env=env, check=True,
                               capture_output=True)
                if warm:
                    subprocess.run([ocm, "search", "logs"], cwd=tmp, env=env, check=True,
                                   capture_output=True)
                t0 = time.perf_counter()
                done = subprocess.run(args(row["new"]), cwd=tmp, env=env, check=True,
                                      capture_output=True, text=True)
                times.append(time.perf_counter() - t0)
                if run == 0:
                    out[label.replace("_ms", "_notice")] = done.stdout.split("\n")[0]
        out[label] = round(statistics.median(times) * 1000, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--families", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--replay", action="store_true")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args()
    pairs = load()
    if args.families:
        print(json.dumps(families(pairs), indent=2))
        return
    if args.cost:
        print(json.dumps(cost(), indent=2))
        return
    if args.replay:
        print(json.dumps({"coding_vault": replay(), "pairs_file_cross": cross(pairs)},
                         indent=2))
        return
    chosen = (supersede.THRESHOLD_SHARED_FILE, supersede.THRESHOLD_NO_SHARED_FILE)
    with_meaning = supersede.THRESHOLD_WITH_MEANING
    action = plandone.THRESHOLD_ACTION
    if args.tune:
        tune_split = [p for p in pairs if p["split"] == "tune"]
        chosen = tune(tune_split)
        with_meaning = tune_meaning(tune_split, chosen)
        action = tune_action(tune_split, chosen, with_meaning)
        print(f"tuned thresholds: shared file {chosen[0]}, no shared file {chosen[1]}, "
              f"with meaning {with_meaning}, plan reported done {action}")
    report = {}
    decisions = [decide(p, chosen, with_meaning, action) for p in pairs]
    for name in ("tune", "test", "all"):
        rows = [i for i, p in enumerate(pairs) if name == "all" or p["split"] == name]
        subset = [pairs[i] for i in rows]
        report[name] = scores(subset, [decisions[i].supersede for i in rows])
        report[name + "_without_plan_done"] = scores(subset, [decisions[i].alike
                                                              for i in rows])
    report["product_path_all"] = scores(pairs, through_the_product(pairs)) if not (
        args.tune) else None
    print(json.dumps({"meaning": MEANING.failed or "on",
                      "thresholds": {"shared_file": chosen[0], "no_shared_file": chosen[1],
                                     "with_meaning": with_meaning,
                                     "plan_reported_done_action": action}, **report},
                     indent=2))
    if args.verbose:
        for p, decision in zip(pairs, decisions, strict=True):
            hit = decision.supersede
            cos = lexical_and_meaning(p)[1]
            flag = "" if hit == (p["label"] == "supersede") else "  <-- wrong"
            route = "done " if decision.done else "     "
            print(f"{p['id']} {p['split']:<4} {p['label']:<9} {decision.score:.3f} {cos:.3f} "
                  f"{'shared' if decision.shared_file else '      '} {route}"
                  f"{p['new']['title'][:50]}{flag}")


if __name__ == "__main__":
    main()
