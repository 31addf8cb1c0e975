"""Warm search of two checkouts, query by query in turn, each in its own long-lived process.

    python bench/warm_ab.py --a CHECKOUT --a-vault VAULT --b CHECKOUT --b-vault VAULT

`bench/ab.py` times each variant's 200 searches in one stretch, one variant after the
other: on a machine whose load swings within a minute that compares the load as much as
the code. Here both processes (PYTHONPATH set to each checkout, like a running MCP server)
open their vault and search bench/perf.py's 20 warm-up queries, then take each of its 200
queries in turn, A then B or B then A alternately, so both meet the same moments of the
machine. Each vault should hold an index its own checkout built (copies of one vault).
Reported per variant: p50 and p95 of the wall time and of the process's CPU time per
search (ms), and their B/A ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_PATH = list(sys.path)
sys.path.insert(0, str(HERE))
from perf import QUERIES, _pct, make_queries  # noqa: E402 - the same queries as bench/perf.py

sys.path[:] = _PATH  # perf.py puts its own checkout first: `ocm` comes from PYTHONPATH


def worker(vault: Path) -> None:
    """Answers one query per input line with its wall and CPU seconds (JSON)."""
    from ocm.project import Project, SearchRequest

    project = Project.open(vault=vault, cwd=vault.parent)
    for query in make_queries(QUERIES)[:20]:
        project.search(query)
    print("ready", flush=True)
    for line in sys.stdin:
        wall, cpu = time.perf_counter(), time.process_time()
        project.search(SearchRequest(query=line.rstrip("\n"), limit=10))
        print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]),
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("a", "b"):
        parser.add_argument(f"--{name}", type=Path, help="a checkout (a folder holding ocm/)")
        parser.add_argument(f"--{name}-vault", type=Path)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    procs = {}
    for name in ("a", "b"):
        env = {k: v for k, v in os.environ.items() if k != "OCM_VAULT"}
        env["PYTHONPATH"] = str(getattr(args, name).resolve())
        vault = getattr(args, f"{name}_vault").resolve()
        procs[name] = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(vault)], env=env, cwd=vault.parent,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for proc in procs.values():
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    times: dict[str, list[list[float]]] = {"a": [], "b": []}
    for number, query in enumerate(make_queries(QUERIES)):
        for name in ("a", "b") if number % 2 == 0 else ("b", "a"):
            proc = procs[name]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(query + "\n")
            proc.stdin.flush()
            times[name].append(json.loads(proc.stdout.readline()))
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    out: dict[str, dict[str, float]] = {}
    for name, found in times.items():
        walls, cpus = [w for w, _ in found], [c for _, c in found]
        out[name] = {f"{what}_{label}_ms": round(_pct(values, q) * 1000, 2)
                     for what, values in (("wall", walls), ("cpu", cpus))
                     for label, q in (("p50", 0.5), ("p95", 0.95))}
    out["b/a"] = {key: round(out["b"][key] / out["a"][key], 3) for key in out["a"]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
