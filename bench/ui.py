"""How fast `ocm ui` answers its pages on a big vault (issue #28), on a vault `bench/perf.py`'s
generator writes (8k sessions and 2k memories at 10k notes).

    .venv/bin/python bench/ui.py --notes 10000 [--keep DIR | --reuse DIR] [--json]

Opens one `Project` (as `ocm ui` does), builds its index, then asks the real dashboard app
(Starlette's test client: the whole request through the guard, the facade and the
templates, without a socket) for each page ROUNDS times after one warm-up, and reports the
median and the slowest wall time in ms, and the median CPU time of this process:

  timeline          /                       the newest 50 sessions, grouped by day and tool
  timeline_deep     /?offset=5000           a page in the middle
  timeline_tool     /?tool=cursor           one tool's sessions
  memories          /memories               the newest 50 active memories and the counts
  memories_any      /memories?status=any    every status
  memory_note       /note/<id>              one memory, rendered, with its chain
  activity          /activity               the four pictures over every note
  brief             /brief                  what the next session start injects
  search            /search?q=...           a search with the page around it
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf  # noqa: E402 - the generator and vault layout of bench/perf.py

ROUNDS = 9
PORT = 8765


def _timed(get, path: str) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    response = get(path)
    if response.status_code != 200:
        raise RuntimeError(f"{path}: HTTP {response.status_code}: {response.text[:200]}")
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def measure(notes: int, workdir: Path) -> dict[str, object]:
    from starlette.testclient import TestClient

    bench = perf.Bench(notes, workdir)
    bench.setup()
    os.environ["OCM_HOME"] = str(bench.home)
    os.environ.pop("OCM_VAULT", None)
    project = bench.project()
    t0 = time.perf_counter()
    project.refresh(project.vault)
    built = (time.perf_counter() - t0) * 1000
    from ocm.ui.app import build

    memory_rel = bench.rels["memory"][len(bench.rels["memory"]) // 2]
    pages = {
        "timeline": "/", "timeline_deep": "/?offset=5000", "timeline_tool": "/?tool=cursor",
        "memories": "/memories", "memories_any": "/memories?status=any",
        "memory_note": "/note/" + Path(memory_rel).stem, "activity": "/activity",
        "brief": "/brief", "search": "/search?q=" + bench.queries[0].replace(" ", "+"),
    }
    out: dict[str, object] = {"notes": notes, "index_ms": round(built, 1),
                              "load": os.getloadavg()[0]}
    with TestClient(build(project, PORT), base_url=f"http://127.0.0.1:{PORT}") as client:
        for name, path in pages.items():
            _timed(client.get, path)  # warm: the first look at a page
            runs = [_timed(client.get, path) for _ in range(ROUNDS)]
            walls = [w for w, _ in runs]
            out[name] = {"median_ms": round(statistics.median(walls), 1),
                         "max_ms": round(max(walls), 1),
                         "cpu_ms": round(statistics.median(c for _, c in runs), 1)}
    out["load_after"] = os.getloadavg()[0]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--keep", type=Path, help="generate into this new folder and keep it")
    parser.add_argument("--reuse", type=Path, help="a folder an earlier --keep left")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    workdir = args.reuse or args.keep or Path(tempfile.mkdtemp(prefix="ocm-ui-bench-"))
    try:
        found = measure(args.notes, workdir)
    finally:
        if not (args.keep or args.reuse):
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(found))
        return
    print(f"{found['notes']} notes; index {found['index_ms']} ms; load "
          f"{found['load']:.1f} -> {found['load_after']:.1f}")
    print(f"{'page':<15} {'median ms':>10} {'max ms':>8} {'cpu ms':>8}")
    for name, row in found.items():
        if isinstance(row, dict):
            print(f"{name:<15} {row['median_ms']:>10} {row['max_ms']:>8} {row['cpu_ms']:>8}")


if __name__ == "__main__":
    main()
