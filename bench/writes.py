"""Write cost in one long-lived process (issue #17: `remember` vs itself at 1k, "10 changed
notes, then a search"), on a vault `bench/perf.py --keep DIR` generated.

    .venv/bin/python bench/writes.py --vault-dir DIR --notes N [--json]

Works on a copy of DIR's vault (the writes would change it), opens one `Project`, warms it
with 20 searches (its index then watches the vault, as in the MCP server), then times:

  remember_ms         `Project.remember` of a new gotcha with files and tags (31 writes)
  incremental_10_ms   10 notes rewritten on disk, then one `Project.search` (9 rounds)

Each as the median wall time and the median CPU time of this process (`process_time`,
which other jobs on a shared machine inflate less than wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf  # noqa: E402 - the generator and vault layout of bench/perf.py

WRITES, ROUNDS = 31, 9


def _timed(action) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def measure(notes: int, kept: Path) -> dict[str, float | int]:
    work = Path(tempfile.mkdtemp(prefix="ocm-writes-"))
    try:
        shutil.copytree(kept, work, symlinks=True, dirs_exist_ok=True)
        bench = perf.Bench(notes, work)
        bench.setup()  # --reuse: checks the copy holds the N generated notes
        os.environ["OCM_HOME"] = str(bench.home)
        os.environ.pop("OCM_VAULT", None)
        project = bench.project()
        from ocm.project import SearchRequest

        for query in bench.queries[:20]:
            project.search(query)
        out: dict[str, float | int] = {"notes": notes}
        times = []
        for i in range(WRITES):
            query = bench.queries[20 + i]
            times.append(_timed(lambda q=query, i=i: project.remember(
                f"When {q} fails under load, check the pool size first ({i}).", "gotcha",
                title=f"{q} fails under load {i}", files=["src/api/pool.py"], tags=["perf"])))
        out["remember_ms"] = round(statistics.median(t[0] for t in times), 2)
        out["remember_cpu_ms"] = round(statistics.median(t[1] for t in times), 2)
        project.search("pool size under load")
        rng = random.Random(5)
        everything = bench.rels["session"] + bench.rels["memory"]
        times = []
        for round_no in range(ROUNDS):
            perf._touch_notes(bench.vault, rng.sample(everything, 10), rng, round_no)
            query = bench.queries[round_no]
            times.append(_timed(lambda q=query: project.search(SearchRequest(query=q,
                                                                             limit=10))))
        out["incremental_10_ms"] = round(statistics.median(t[0] for t in times), 2)
        out["incremental_10_cpu_ms"] = round(statistics.median(t[1] for t in times), 2)
        out["load_1min"] = os.getloadavg()[0]
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault-dir", type=Path, required=True,
                        help="a folder `bench/perf.py --notes N --keep DIR` made")
    parser.add_argument("--notes", type=int, required=True)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not (args.vault_dir / "project" / ".openCodeMemory" / "sessions").is_dir():
        parser.error(f"{args.vault_dir} is not a folder bench/perf.py --keep made")
    result = measure(args.notes, args.vault_dir)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:<22}  {value}")


if __name__ == "__main__":
    main()
