"""How often redaction fires on ordinary code and prose (false positives).

    .venv/bin/python bench/redaction_fp.py [--show N] [ROOT ...]

Scans every text file under the roots (default: this repository's `ocm/`, `bench/`,
`scripts/`, README.md and the installed packages of the running Python, whose source,
README and docs are ordinary code and prose written by many hands) and reports, per kind,
how many spans `find_secrets` marks, per MB scanned. Test folders are skipped: they hold
fake credentials on purpose. Every hit is a candidate false positive; `--show N` prints N of
them to judge by eye (some are real example keys from documentation).
"""

from __future__ import annotations

import argparse
import site
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ocm.vault.secrets.redact import find_secrets  # noqa: E402

SUFFIXES = {".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json",
            ".pyi", ".html"}
SKIP_PARTS = {"tests", "test", "testing", "__pycache__", ".git", ".index"}


def files(roots: list[Path]):
    for root in roots:
        if root.is_file():
            yield root
            continue
        for path in sorted(root.rglob("*")):
            if (path.suffix in SUFFIXES and path.is_file() and not path.is_symlink()
                    and not SKIP_PARTS & set(path.relative_to(root).parts)):
                yield path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args()
    roots = args.roots or [ROOT / "ocm", ROOT / "bench", ROOT / "scripts", ROOT / "README.md",
                           *map(Path, site.getsitepackages())]
    kinds: Counter[str] = Counter()
    samples: list[str] = []
    n_files = n_bytes = n_lines = 0
    start = time.perf_counter()
    for path in files(roots):
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        n_files += 1
        n_bytes += len(text.encode())
        n_lines += text.count("\n") + 1
        for kind, s, e in find_secrets(text):
            kinds[kind] += 1
            line_start = text.rfind("\n", 0, s) + 1
            samples.append(f"{path}: {kind}: {text[line_start:e + 20].splitlines()[0][:160]}")
    elapsed = time.perf_counter() - start
    hits = sum(kinds.values())
    mb = n_bytes / 1e6
    print(f"{n_files:,} files, {mb:.1f} MB, {n_lines:,} lines scanned in {elapsed:.1f} s")
    print(f"{hits:,} spans marked: {hits / mb:.2f} per MB, one per {n_lines // max(hits, 1):,} "
          "lines")
    for kind, count in kinds.most_common():
        print(f"  {kind:32} {count:6,}")
    for line in samples[: args.show]:
        print(line)


if __name__ == "__main__":
    main()
