"""Every hit of a few hundred warm searches, to compare two checkouts' results exactly.

    PYTHONPATH=CHECKOUT python bench/same_results.py --vault VAULT > out.jsonl

One line per search: the query, its filters and each hit's JSON (`Hit.to_json`, which
rounds the score) with the score's exact `repr`, the note's path in the vault and no
project name. Run it with each checkout's code on a vault whose index that checkout
built, then `cmp` the outputs: a speed change must leave them equal. The queries are bench/perf.py's
(`make_queries`), searched in turn as they are, with all 60 candidates (limit 60), with a
type filter and as chunks (group=False). It runs under PYTHONHASHSEED=0 unless one is set:
the last digit of some chunk scores follows the hash seed (set order), at b2c42d4 too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
_PATH = list(sys.path)
sys.path.insert(0, str(HERE))
from perf import make_queries  # noqa: E402 - the same queries as bench/perf.py

sys.path[:] = _PATH  # perf.py puts its own checkout first: `ocm` comes from PYTHONPATH

# A fixed clock: decay must not differ between the two runs.
NOW = datetime(2026, 11, 25, 12, 0)


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") is None:  # one seed for both checkouts' runs
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    from ocm.project import Project, SearchRequest

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    project = Project.open(vault=args.vault, cwd=args.vault.parent)
    variants = [{}, {"limit": 60}, {"types": ("gotcha", "decision")}, {"group": False}]
    for number, query in enumerate(make_queries(args.queries)):
        options = variants[number % len(variants)]
        hits = project.search(SearchRequest(query=query, now=NOW, **options))
        print(json.dumps({"query": query, "options": repr(options),
                          "hits": [{**hit.to_json(), "exact": repr(hit.score),
                                    # not the copy's folder (nor its name)
                                    "markdown_path": hit.relpath, "project": None}
                                   for hit in hits]}, sort_keys=True))


if __name__ == "__main__":
    main()
