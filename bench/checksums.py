"""What checking the index's segment files against their checksums costs (issue #31).

    .venv/bin/python bench/checksums.py VAULT_ROOT [--repeat 5]

On a built vault (e.g. one `bench/perf.py --keep DIR` left: DIR/project/.openCodeMemory):
the index's size, the time to read every segment file and compute its CRC-32 (what a
check of every file in every fresh process would cost), `Checksums.check()` in a process
that has verified nothing yet (what a fresh `ocm search` pays: the small files read, the
large ones stat'ed; the files are in the page cache, as right after the build or any recent
search) and once every file is verified (what each
later freshness check of a long-lived process pays: a `stat` per file), and `record()` of
an index without a table (the one-off of an index written before checksums). Medians of
`--repeat` runs, milliseconds, with the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ocm.indexer import checksums  # noqa: E402


def _ms(run, repeat: int, before=None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = args.vault / ".index"
    sums = checksums.Checksums(folder)
    table = folder / checksums.SUMS
    saved = table.read_bytes() if table.exists() else None
    if saved is None:
        sums.record()
    files = [p for p in folder.iterdir() if checksums._SEGMENT_FILE.match(p.name)]
    result = {
        "segment_files": len(files),
        "segment_mb": round(sum(p.stat().st_size for p in files) / 1e6, 1),
        "read_every_file_ms": _ms(lambda: [checksums.crc_of(str(p)) for p in files],
                                  args.repeat),
        "small_files": sum(p.stat().st_size <= checksums.FULL_CHECK_BYTES for p in files),
        "check_fresh_process_ms": _ms(sums.check, args.repeat, checksums._VERIFIED.clear),
        "check_warm_ms": _ms(sums.check, args.repeat),
        "record_without_table_ms": _ms(
            sums.record, args.repeat,
            lambda: (table.unlink(missing_ok=True), checksums._VERIFIED.clear())),
        "load_avg_1m": round(os.getloadavg()[0], 1),
    }
    assert sums.check()[0] is None
    if saved is not None:
        table.write_bytes(saved)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
