"""Recall of auto-supersede's candidates in a watching process: embeddings vs postings.

    python bench/supersede_candidates.py [--notes 10000]

A vault holding the coding vault's records (bench/data/coding), the memories of a
generated vault of `--notes` notes (bench/perf.py: a fifth are memories, of every type) and
every `supersede` pair's older record (bench/data/coding/supersede_pairs.jsonl), indexed
and watched as the MCP server's is. For each pair: is the older record among the candidates
`Project._supersede_candidates` gives the newer one, from the notes' embeddings (meaning
on) and from the postings of its rarest words (OCM_SEMANTIC=0)? SUPERSEDE_SCAN_MAX is set
to 5 so that every type is asked of the index. Prints JSON, and the time of each path.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import perf  # noqa: E402

import ocm.project  # noqa: E402
from ocm.project import Project  # noqa: E402

CODING = ROOT / "bench" / "data" / "coding"


def fill(project: Project, scratch: Path, notes: int) -> list[tuple[dict, Path]]:
    """Put the coding vault's records, the memories of `notes` generated notes (made under
    `scratch`) and every `supersede` pair's older record into `project`, then search until
    its index watches the vault with all of them committed; each pair with its older
    record's path."""
    perf.generate_vault(scratch / "generated", notes)
    for source in (CODING / "vault", scratch / "generated"):
        shutil.copytree(source / "memories", project.vault.memories_dir, dirs_exist_ok=True)
    pairs = [json.loads(line) for line in
             (CODING / "supersede_pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    olds = []
    for pair in pairs:
        if pair["label"] == "supersede":
            old = pair["old"]
            written = project.remember(old["content"], pair["type"], title=old["title"],
                                       files=old.get("files"), auto_supersede=False)
            olds.append((pair, written.path.resolve()))
    for _ in range(3):  # two checks scan, the third starts the watch
        project.search("background jobs")
    index = project.index_for(project.vault)
    assert index._watch is not None and index.unindexed() == set()
    return olds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    args = ap.parse_args()
    ocm.project.SUPERSEDE_SCAN_MAX = 5
    with tempfile.TemporaryDirectory(prefix="ocm-candidates-") as tmp:
        os.environ["OCM_HOME"] = str(Path(tmp) / "home")
        project = Project.open(vault=Path(tmp) / "vault" / ".openCodeMemory", cwd=tmp)
        project.init()
        olds = fill(project, Path(tmp), args.notes)
        report: dict[str, dict] = {}
        for name, semantic in (("vectors", "1"), ("postings", "0")):
            os.environ["OCM_SEMANTIC"] = semantic
            found, ranks, times = 0, [], []
            for pair, old in olds:
                new = pair["new"]
                t0 = time.perf_counter()
                got = project._supersede_candidates(project.vault, pair["type"], new["title"],
                                                    new["content"])
                times.append(time.perf_counter() - t0)
                paths = [path.resolve() for path in got or ()]
                if old in paths:
                    found += 1
                    ranks.append(paths.index(old) + 1)
            report[name] = {"pairs": len(olds), "found": found, "worst_rank": max(ranks),
                            "median_ms": perf._ms(perf._median(times[1:]))}
        memories = sum(1 for _ in project.vault.memories_dir.rglob("*.md"))
        print(json.dumps({"records": memories, **report}, indent=1))


if __name__ == "__main__":
    main()
