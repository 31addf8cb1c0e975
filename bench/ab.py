"""Before/after speed of two source checkouts on one vault, interleaved.

    python bench/ab.py --a OLD_CHECKOUT --b NEW_CHECKOUT --vault VAULT [--rounds 3] [--json]

On a shared machine the load drifts by minutes, so two `bench/perf.py` runs one after the
other compare the load as much as the code. Here every measurement alternates A, B, A, B
on copies of one vault (e.g. one `bench/perf.py --keep DIR` generated), each in a fresh
process of this interpreter with `PYTHONPATH` set to the checkout, so both meet the same
moments of the machine. Measured per variant (medians over rounds): `ocm rebuild-index`
(notes/s), warm `Project.search` p50/p95 over perf.py's 200 queries (one process per
round, 20 warm-up queries first), a fresh `ocm search --json` process, and the size of
`.index/` after the build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_PATH = list(sys.path)
sys.path.insert(0, str(HERE))
from perf import QUERIES, make_queries  # noqa: E402 - the same queries as bench/perf.py

sys.path[:] = _PATH  # perf.py puts its own checkout first: `ocm` comes from PYTHONPATH


def _env(checkout: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCM_")}
    env.update(PYTHONPATH=str(checkout), OCM_HOME=str(home))
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=7200)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} failed: {done.stderr[-600:]}")
    return elapsed, done.stdout


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def worker(vault: Path) -> None:
    """One warm-search run in this process: p50 and p95 in ms, as JSON on stdout."""
    from ocm.project import Project, SearchRequest

    project = Project.open(vault=vault, cwd=vault.parent)
    queries = make_queries(QUERIES)
    for query in queries[:20]:
        project.search(query)
    times = []
    for query in queries:
        t0 = time.perf_counter()
        project.search(SearchRequest(query=query, limit=10))
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({"p50": times[len(times) // 2] * 1000,
                      "p95": times[int(0.95 * (len(times) - 1))] * 1000}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", type=Path, help="the old checkout (a folder holding ocm/)")
    parser.add_argument("--b", type=Path, help="the new checkout")
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli-runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.vault)
        return
    ocm = str(Path(sys.executable).parent / "ocm")
    notes = sum(1 for p in args.vault.rglob("*.md") if ".index" not in p.parts)
    results: dict[str, dict[str, list[float]]] = {"a": {}, "b": {}}
    with tempfile.TemporaryDirectory(prefix="ocm-ab-") as tmp:
        work = Path(tmp)
        vaults, envs = {}, {}
        for name, checkout in (("a", args.a), ("b", args.b)):
            project = work / name / "project"
            shutil.copytree(args.vault, project / ".openCodeMemory",
                            ignore=shutil.ignore_patterns(".index", ".locks"))
            subprocess.run(["git", "init", "-q"], cwd=project, check=False,
                           capture_output=True)
            vaults[name] = project / ".openCodeMemory"
            envs[name] = _env(checkout.resolve(), work / name / "home")
            subprocess.run([sys.executable, "-m", "compileall", "-q",
                            str(checkout.resolve() / "ocm")], capture_output=True, check=False)

        def record(name: str, key: str, value: float) -> None:
            results[name].setdefault(key, []).append(value)
            print(f"[{time.strftime('%H:%M:%S')}] {name} {key} {value:.2f}", file=sys.stderr)

        for _ in range(args.rounds):
            for name in ("a", "b"):
                vault = vaults[name]
                elapsed, _ = _timed([ocm, "rebuild-index", "--json", "--vault", str(vault)],
                                    envs[name], vault.parent)
                record(name, "build_notes_per_s", notes / elapsed)
                record(name, "index_mb", _size(vault / ".index") / 1e6)
            for name in ("a", "b"):
                _, out = _timed([sys.executable, __file__, "--worker", "--vault",
                                 str(vaults[name])], envs[name], vaults[name].parent)
                found = json.loads(out)
                record(name, "search_p50_ms", found["p50"])
                record(name, "search_p95_ms", found["p95"])
            for i in range(args.cli_runs):
                query = make_queries(QUERIES)[40 + i]  # as bench/perf.py's cli_search_ms
                for name in ("a", "b"):
                    elapsed, _ = _timed([ocm, "search", "--json", "--vault",
                                         str(vaults[name]), *query.split()],
                                        envs[name], vaults[name].parent)
                    record(name, "cli_search_ms", elapsed * 1000)
    summary = {name: {key: round(statistics.median(values), 2)
                      for key, values in found.items()} for name, found in results.items()}
    summary["notes"] = notes  # type: ignore[assignment]
    if args.json:
        print(json.dumps(summary))
    else:
        for key in summary["a"]:
            print(f"{key:20} A {summary['a'][key]:>10}   B {summary['b'][key]:>10}")


if __name__ == "__main__":
    main()
