"""`remember` of two checkouts in turn, each in its own long-lived process (issue #29).

    python bench/remember_ab.py --kept DIR --notes N --a CHECKOUT --b CHECKOUT [--writes 31]

DIR is a `bench/perf.py --keep DIR` folder holding N generated notes and their index. Each
variant (PYTHONPATH set to its checkout, like a running MCP server) works on its own copy of
DIR, searches perf.py's 20 warm-up queries, then runs `peers.py`'s steps before its writes
(5 rounds of 10 notes rewritten on disk, then a search); then both take `peers.py`'s writes
(a new gotcha with a file and tags) one at a time, A then B or B then A alternately, so both
meet the same moments of the machine. Reported per variant: the median wall and CPU ms of
the first 11 writes (what `peers.py` takes at 1k and 10k) and of all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS_WRITES = 11  # peers.py's writes at 1k and 10k


def worker(work: Path, notes: int) -> None:
    """Answers one write per input line (its number) with its wall and CPU ms (JSON)."""
    saved = list(sys.path)
    sys.path.insert(1, str(HERE))
    import perf  # the generator's layout and queries; `ocm` still comes from PYTHONPATH

    sys.path[:] = saved
    bench = perf.Bench(notes, work)
    bench.setup()
    os.environ["OCM_HOME"] = str(bench.home)
    os.environ.pop("OCM_VAULT", None)
    project = bench.project()
    from ocm.project import SearchRequest

    for query in bench.queries[:20]:
        project.search(query)
    rng = random.Random(5)
    everything = bench.rels["session"] + bench.rels["memory"]
    for round_no in range(5):
        perf._touch_notes(bench.vault, rng.sample(everything, 10), rng, round_no)
        project.search(SearchRequest(query=bench.queries[round_no], limit=10))
    print("ready", flush=True)
    for line in sys.stdin:
        i = int(line)
        query = bench.queries[20 + i]
        wall, cpu = time.perf_counter(), time.process_time()
        project.remember(f"When {query} fails under load, check the pool size first ({i}).",
                         "gotcha", title=f"{query} fails under load {i}",
                         files=["src/api/pool.py"], tags=["perf"])
        print(json.dumps([(time.perf_counter() - wall) * 1000,
                          (time.process_time() - cpu) * 1000]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kept", type=Path, required=True)
    parser.add_argument("--notes", type=int, required=True)
    parser.add_argument("--a", type=Path, help="a checkout (a folder holding ocm/)")
    parser.add_argument("--b", type=Path, help="a checkout (a folder holding ocm/)")
    parser.add_argument("--writes", type=int, default=31)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.notes)
        return
    if not (args.a and args.b):
        parser.error("--a and --b are required")
    procs, works = {}, []
    try:
        for name, code in (("A", args.a), ("B", args.b)):
            work = Path(tempfile.mkdtemp(prefix="ocm-remember-ab-"))
            works.append(work)
            shutil.copytree(args.kept, work, symlinks=True, dirs_exist_ok=True)
            env = {k: v for k, v in os.environ.items() if k != "OCM_VAULT"}
            env["PYTHONPATH"] = str(code.resolve())
            procs[name] = subprocess.Popen(
                [sys.executable, __file__, "--worker", str(work), "--kept", str(args.kept),
                 "--notes", str(args.notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True, env=env, cwd=code)
        for proc in procs.values():
            assert proc.stdout and proc.stdin
            if proc.stdout.readline().strip() != "ready":
                raise SystemExit("a worker failed before its writes")
        times: dict[str, list[list[float]]] = {"A": [], "B": []}
        for i in range(args.writes):
            for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
                proc = procs[name]
                assert proc.stdout and proc.stdin
                proc.stdin.write(f"{i}\n")
                proc.stdin.flush()
                times[name].append(json.loads(proc.stdout.readline()))
    finally:
        for proc in procs.values():
            if proc.stdin:
                proc.stdin.close()
            proc.wait()
        for work in works:
            shutil.rmtree(work, ignore_errors=True)
    out: dict[str, object] = {"notes": args.notes, "load_1min": round(os.getloadavg()[0], 1)}
    for name, rows in times.items():
        out[name] = {f"{what}_p50{suffix}": round(statistics.median(r[col] for r in part), 2)
                     for suffix, part in (("_first", rows[:PEERS_WRITES]), ("", rows))
                     for col, what in ((0, "wall"), (1, "cpu"))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
