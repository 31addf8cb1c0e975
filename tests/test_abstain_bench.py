"""bench/abstain.py on a tiny eval set of two groups on different topics: each group's
queries find their note at home and nothing in the other group's vault; the calibration
counts in-group hits only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "abstain.py"


def test_abstain_reports_cross_group_nothing_and_in_group_ndcg(tmp_path: Path) -> None:
    data = tmp_path / "set"
    data.mkdir()
    corpus = [
        {"id": "d1", "title": "", "text": "Caroline adopted a kitten named Oscar.", "group": "g1"},
        {"id": "d2", "title": "", "text": "Melanie ran a marathon in May.", "group": "g1"},
        {"id": "d3", "title": "", "text": "The Postgres pool size is twenty connections.",
         "group": "g2"},
        {"id": "d4", "title": "", "text": "Deploys go through the staging cluster first.",
         "group": "g2"},
    ]
    queries = [
        {"id": "q1", "text": "Who adopted a kitten?", "group": "g1"},
        {"id": "q2", "text": "What marathon did Melanie run?", "group": "g1"},
        {"id": "q3", "text": "postgres pool size", "group": "g2"},
        {"id": "q4", "text": "staging cluster deploys", "group": "g2"},
    ]
    (data / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus))
    (data / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    (data / "qrels.tsv").write_text("q1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq4\td4\t1\n")
    dump = tmp_path / "dump.jsonl"
    out = subprocess.run([sys.executable, str(BENCH), "--data", str(data), "--json",
                          "--dump", str(dump)], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)[0]
    assert result["in_group_queries"] == 4 and result["in_group_ndcg@10"] == 1.0
    assert result["in_group_answered"] == 1.0
    assert result["cross_queries"] == 4 and result["cross_nothing"] == 1.0
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(rows) == 8 and all(not r["hits"] for r in rows if not r["in_group"])
    table = json.loads(subprocess.run([sys.executable, str(BENCH), "--calibrate", str(dump)],
                                      capture_output=True, text=True, check=True).stdout)
    counted = sum(n for bins in table.values() for n, _ in bins)
    assert counted == sum(len(r["hits"]) for r in rows if r["in_group"])
