"""What checking the index's segment files against their checksums costs (issue #31).

    .venv/bin/python bench/checksums.py VAULT_ROOT [--repeat 5]

On a built vault (e.g. one `bench/perf.py --keep DIR` left: DIR/project/.openCodeMemory):
the index's size; `Checksums.check()` in a process that has verified nothing yet (what a
fresh `ocm search` pays: each file with block digests looked at, each smaller one mapped and
its XXH3-64 computed; the files are in the page cache, as right after the build or any
recent search) and once every file is
verified (what each later freshness check of a long-lived process pays: a `stat` per file);
the fresh check again without block digests (every file read whole, as before them);
beside it, every file read in 1 MiB chunks with zlib's CRC-32 (the check before XXH3) and
zlib's CRC-32 over the mapped file; and `record()` of an index without a table (the
one-off of an index written before checksums, block digests included). Medians of
`--repeat` runs, wall and CPU milliseconds (CPU is what to compare under load), with the
machine's load average.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import statistics
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ocm.indexer import checksums  # noqa: E402


def _ms(run, repeat: int, before=None) -> list[float]:
    """[wall, CPU] milliseconds, medians of `repeat` runs."""
    wall, cpu = [], []
    for _ in range(repeat):
        if before is not None:
            before()
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return [round(statistics.median(wall), 1), round(statistics.median(cpu), 1)]


def _crc32_read(path: Path) -> int:
    with open(path, "rb") as handle:
        crc = 0
        while chunk := handle.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def _crc32_mapped(path: Path) -> int:
    with open(path, "rb") as handle:
        if not os.fstat(handle.fileno()).st_size:
            return 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return zlib.crc32(mapped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = args.vault / ".index"
    sums = checksums.Checksums(folder)
    table = folder / checksums.SUMS
    saved = table.read_bytes() if table.exists() else None
    sums.record()  # a table in today's form (an older one is read as none)
    files = [p for p in folder.iterdir() if checksums._SEGMENT_FILE.match(p.name)]
    blocks = folder / checksums.BLOCKS
    whole = checksums.Checksums(folder)
    # Reads as no block digests.
    whole._blocks = dict  # type: ignore[method-assign]

    def fresh_process() -> None:
        checksums._VERIFIED.clear()
        checksums._BLOCKED.clear()

    def no_table() -> None:
        table.unlink(missing_ok=True)
        blocks.unlink(missing_ok=True)
        fresh_process()
    result = {
        "segment_files": len(files),
        "segment_mb": round(sum(p.stat().st_size for p in files) / 1e6, 1),
        # Files with block digests only looked at (their blocks are checked as a search
        # reads them); the smaller ones read whole.
        "check_fresh_process_ms": _ms(sums.check, args.repeat, fresh_process),
        "check_warm_ms": _ms(sums.check, args.repeat),
        # The same without block digests (an index by code before them): every file whole.
        "check_fresh_whole_ms": _ms(lambda: whole.check(), args.repeat, fresh_process),
        "crc32_read_every_file_ms": _ms(lambda: [_crc32_read(p) for p in files], args.repeat),
        "crc32_mapped_every_file_ms": _ms(lambda: [_crc32_mapped(p) for p in files],
                                          args.repeat),
        "record_without_table_ms": _ms(sums.record, args.repeat, no_table),
        "load_avg_1m": round(os.getloadavg()[0], 1),
    }
    assert sums.check()[0] is None
    if saved is not None:
        table.write_bytes(saved)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
