"""BM25F's pass over clauses new to the scorer, two checkouts in alternating processes.

    python bench/first_touch.py --a CHECKOUT --b CHECKOUT --vault VAULT [--b-vault VAULT]
                                [--processes 4]

A warm search meets ~11 of its ~32 (field, term, boost) clauses for the first time; their
postings are looked up in every segment and scored, which is most of BM25F's share of a warm
search. Here each process (PYTHONPATH set to one checkout) opens the vault, searches once,
then times `PostingScorer.top` for the clauses of each of bench/perf.py's 200 queries with
the scorer's caches (postings, clause scores, idf) emptied first, so every clause is new;
`--rounds` times, keeping the best. The checkouts' processes take turns, A then B, and the
best per checkout is reported (CPU ms per query) with B/A. Both read the same vault, or B
its own copy (`--b-vault`, one indexed by B's code) when B writes its index differently.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_PATH = list(sys.path)
sys.path.insert(0, str(HERE))
from perf import QUERIES, make_queries  # noqa: E402 - the same queries as bench/perf.py

sys.path[:] = _PATH  # perf.py puts its own checkout first: `ocm` comes from PYTHONPATH


def worker(vault: Path, rounds: int) -> None:
    """Prints the best CPU ms per query of `rounds` passes with every clause new."""
    from ocm.indexer import ontopic
    from ocm.indexer.search import CANDIDATES, term_clauses
    from ocm.project import Project

    project = Project.open(vault=vault, cwd=vault.parent)
    queries = make_queries(QUERIES)
    project.search(queries[0])
    index = project.index_for(project._vaults("project")[0])
    clauses = [term_clauses(ontopic.query_terms(query)) for query in queries]
    best = float("inf")
    for _ in range(rounds):
        scorer = index.scorer()
        scorer.cache._postings.clear()
        scorer.cache._size = 0
        scorer._clauses.clear()
        scorer._clause_size = 0
        scorer._held.clear()
        scorer.searcher._idf_cache.clear()
        start = time.process_time()
        for each in clauses:
            scorer.top(each, 2 * CANDIDATES + 20)
        best = min(best, (time.process_time() - start) / len(clauses))
    print(f"{best * 1000:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", type=Path, required=True, help="a checkout (a folder holding ocm/)")
    parser.add_argument("--b", type=Path, required=True)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--b-vault", type=Path, help="B's copy of the vault (default: --vault)")
    parser.add_argument("--processes", type=int, default=4, help="per checkout")
    parser.add_argument("--rounds", type=int, default=5, help="passes per process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.vault.resolve(), args.rounds)
        return
    best = {"a": float("inf"), "b": float("inf")}
    vaults = {"a": args.vault.resolve(), "b": (args.b_vault or args.vault).resolve()}
    for _ in range(args.processes):
        for name in ("a", "b"):
            env = {k: v for k, v in os.environ.items() if k != "OCM_VAULT"}
            env["PYTHONPATH"] = str(getattr(args, name).resolve())
            out = subprocess.run(
                [sys.executable, __file__, "--worker", "--a", ".", "--b", ".",
                 "--vault", str(vaults[name]), "--rounds", str(args.rounds)],
                env=env, cwd=vaults[name].parent, capture_output=True, text=True,
                check=True)
            best[name] = min(best[name], float(out.stdout.split()[-1]))
    print(f"first-touch top, CPU ms a query: A {best['a']:.3f}, B {best['b']:.3f}, "
          f"B/A {best['b'] / best['a']:.3f}")


if __name__ == "__main__":
    main()
