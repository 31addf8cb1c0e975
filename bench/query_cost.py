"""Search cost against the length of the query (issue #31): one long token, one camelCase
token and many short words, at growing lengths, on a small real vault.

    .venv/bin/python bench/query_cost.py [LENGTH ...]

The entry points refuse a query over MAX_QUERY_CHARS (10,000); this script lifts that limit
in process to show the cost past it is linear too (it was quadratic in one token's length:
the intent regex `\\S*\\w[/\\\\._]\\w\\S*` retried every offset of a long token).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    lengths = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000, 1_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OCM_HOME"] = str(Path(tmp) / "home")
        repo = Path(tmp) / "proj"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        import ocm.vault.limits as limits
        from ocm.project import Project, SearchRequest

        limits.MAX_QUERY_CHARS = 10**9  # measured past the limit on purpose
        project = Project.open(cwd=repo)
        project.init()
        for i in range(50):
            project.remember(f"Note {i}: the retry budget of service {i} is {i % 7} attempts.",
                             "gotcha")
        project.search(SearchRequest(query="retry budget aB1 x.y"))  # warm: model, index
        shapes = {"one token": "ab", "camelCase token": "aB1", "short words": "ab "}
        print(f"{'length':>10}  " + "  ".join(f"{name:>16}" for name in shapes))
        for n in lengths:
            cells = []
            for unit in shapes.values():
                query = unit * (n // len(unit))
                start = time.perf_counter()
                project.search(SearchRequest(query=query))
                cells.append(f"{time.perf_counter() - start:>15.3f}s")
            print(f"{n:>10,}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
