"""Tombstones and automatic bug_fix twins: what `remember` refuses or merges, measured
through the real `Vault.remember` (no LLM).

    python bench/tombstones.py

Tombstones (ocm/vault/alike/tombstones.py). For every labelled pair of
`bench/data/coding/supersede_pairs.jsonl` (an update or a look-alike: a distinct record),
in a fresh vault: the older record is stored and retired (superseded, then in another vault
resolved), and the newer one remembered. Refused = a false block. Then each older record is
retired and remembered again with its form changed (bench/duplicates.py's VARIANTS): refused
= a tombstone found.

Automatic bug_fix twins (ocm/vault/alike/autofix.py). `bench/data/coding/autofix_pairs.jsonl`:
an automatic bug_fix (command, error line, files) and an agent's gotcha or bug_fix, labelled
the same failure or not; `same_failure` is counted at each ERROR_COVER on a grid.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from duplicates import VARIANTS  # noqa: E402

from ocm.indexer.likeness import Likeness  # noqa: E402
from ocm.vault.alike import autofix, nearcopies  # noqa: E402
from ocm.vault.store import Vault  # noqa: E402

PAIRS = ROOT / "bench" / "data" / "coding" / "supersede_pairs.jsonl"
AUTOFIX = ROOT / "bench" / "data" / "coding" / "autofix_pairs.jsonl"
MEANING = Likeness(None)
STATUSES = ("superseded", "resolved")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def refused(memory_type: str, old: dict, new_title: str, new_text: str, status: str) -> bool:
    """Whether `remember` refuses (new_title, new_text) once `old` is `status`."""
    with tempfile.TemporaryDirectory() as tmp:
        vault = Vault(Path(tmp) / ".openCodeMemory", project="bench")
        first = vault.remember(old["content"], memory_type, title=old["title"],
                               files=old.get("files"), auto_supersede=False)
        if status == "superseded":
            other = vault.remember("A placeholder replacement.", "context")
            vault.set_memory_status(first.id, status, superseded_by=other.id)
        else:
            vault.set_memory_status(first.id, status)
        result = vault.remember(new_text, memory_type, title=new_title,
                                files=old.get("files"), meaning=MEANING)
        return not result.changed and result.id == first.id


def tombstones() -> dict:
    pairs = _lines(PAIRS)
    false_blocks = {s: [p["id"] for p in pairs
                        if refused(p["type"], p["old"], p["new"]["title"],
                                   p["new"]["content"], s)] for s in STATUSES}
    found = {name: sum(refused(p["type"], p["old"], *make(p["old"]["title"],
                                                          p["old"]["content"]), "resolved")
                       for p in pairs)
             for name, make in VARIANTS.items()}
    return {
        "meaning": MEANING.failed or "on",
        "bars": {"words": nearcopies.NEAR_COPY_WORDS, "meaning": nearcopies.NEAR_COPY_MEANING,
                 "words_alone": nearcopies.NEAR_COPY_WORDS_ALONE},
        "distinct_pairs": len(pairs),
        "false_blocks": {s: f"{len(ids)}/{len(pairs)} {ids}" for s, ids in false_blocks.items()},
        "retired_copies_refused": {name: f"{n}/{len(pairs)}" for name, n in found.items()},
    }


def twins() -> dict:
    rows = _lines(AUTOFIX)
    shipped = autofix.ERROR_COVER
    grid = {}
    for cover in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        autofix.ERROR_COVER = cover
        hits = {True: 0, False: 0}
        for row in rows:
            fail = autofix.Failure("auto-fix-bench", row["command"], row["error"],
                                   row["files"], "", "")
            agent = row["agent"]
            if autofix.same_failure(fail, agent["title"], agent["content"], agent["files"], ""):
                hits[row["same"]] += 1
        grid[str(cover)] = {"same_found": f"{hits[True]}/{sum(r['same'] for r in rows)}",
                            "distinct_merged": f"{hits[False]}/"
                                               f"{sum(not r['same'] for r in rows)}"}
    autofix.ERROR_COVER = shipped
    return {"error_cover": shipped, "grid": grid}


def main() -> None:
    print(json.dumps({"tombstones": tombstones(), "automatic_bug_fix_twins": twins()},
                     indent=2))


if __name__ == "__main__":
    main()
