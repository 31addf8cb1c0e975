"""Retrieval through transcript notes: conversations kept as transcripts, found by turn.

    python bench/retrieval_transcript.py --data ../shared/eval/locomo/turn/dev [--json]

Each session of each conversation (`meta.session` of a turn-level eval set) becomes one
transcript note, written through the real rendering code (`ocm.vault.transcripts.fold`:
one `## Turn N · HH:MM · first words` section per corpus turn, its text as the prompt).
Every query is searched in its conversation's vault at product defaults
(`Project.search(query)`, "now" pinned to the conversation's last date), then scored:

* turn level: a hit counts as the corpus turn of its section (the hit's chunk anchor,
  `Turn N`); the default grouped list gives up to `TRANSCRIPT_TURNS` (3) turns per
  session (ocm/indexer/search.py `grouped_hits`); `--chunks` also scores the section
  listing (`group=False`), where every matching turn is its own result;
* session level: a hit counts as its session, relevant when the query's evidence lies in it.

Compare with `bench/retrieval.py --data …/turn/dev` (one memory per turn), run alongside.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import retrieval as rb  # noqa: E402

_TURN = re.compile(r"Turn (\d+)\b")


def write_transcripts(vault: Path, docs: list[dict[str, Any]]) -> dict[str, dict[int, str]]:
    """One transcript note per session; returns note id -> turn number -> corpus doc id."""
    from ocm.vault.transcripts import Turn, fold

    sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for doc in docs:
        sessions[str((doc.get("meta") or {}).get("session"))].append(doc)
    source = vault.parent / "empty.jsonl"
    source.write_text("{}\n")
    out: dict[str, dict[int, str]] = {}
    for number, (session, turns) in enumerate(sessions.items(), 1):
        note_id = f"s{number:03d}-session-{session}"
        items = [Turn(prompt=d.get("text") or "", time=str(d.get("date") or ""))
                 for d in turns]
        started = rb.parse_date(turns[0].get("date"))
        result = fold(vault, note_id, note_id, "bench", "", str(source),
                      lambda _lines, items=items: (items, 1), started=started)
        assert result is not None and result.turns == len(turns)
        out[f"{note_id}_transcript"] = {i: str(d["id"]) for i, d in enumerate(turns, 1)}
    return out


def run_set(data: Path, chunks: bool) -> dict[str, Any]:
    from ocm.project import Project

    docs = rb.load_jsonl(data / "corpus.jsonl")
    queries = rb.load_jsonl(data / "queries.jsonl")
    qrels = rb.load_qrels(data / "qrels.tsv")
    session_of = {str(d["id"]): str((d.get("meta") or {}).get("session")) for d in docs}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for doc in docs:
        groups[str(doc.get("group"))].append(doc)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        if q["id"] in qrels:
            by_group[str(q.get("group"))].append(q)
    scores: dict[str, list[dict[str, float]]] = defaultdict(list)
    times: list[float] = []
    for name, gdocs in groups.items():
        now = max(d for d in (rb.parse_date(x.get("date")) for x in gdocs) if d)
        with tempfile.TemporaryDirectory(prefix="ocm-bench-tx-") as tmp, \
                rb.isolated_user_vault():
            vault = Path(tmp) / "proj" / ".openCodeMemory"
            vault.mkdir(parents=True)
            turns = write_transcripts(vault, gdocs)
            project = Project.open(vault=vault, cwd=vault.parent)
            sess_of_note = {nid: session_of[t[1]] for nid, t in turns.items()}
            for q in by_group.get(name, []):
                relevant = qrels[q["id"]]
                start = time.perf_counter()
                hits = project.search(q["text"], now=now)
                times.append((time.perf_counter() - start) * 1000)
                ranked = [_turn_doc(h, turns) for h in hits]
                scores["turn"].append(rb.query_metrics(rb.dedupe(ranked), relevant))
                rel_sessions = {session_of[r] for r in relevant if r in session_of}
                ranked_s = rb.dedupe(sess_of_note.get(h.id, h.id) for h in hits)
                scores["session"].append(rb.query_metrics(ranked_s, rel_sessions))
                if chunks:
                    listed = project.search(q["text"], now=now, group=False)
                    ranked_c = [_turn_doc(h, turns) for h in listed]
                    scores["turn_chunks"].append(
                        rb.query_metrics(rb.dedupe(ranked_c), relevant))
    out: dict[str, Any] = {"set": rb.set_name(data), "queries": len(scores["turn"]),
                           "search_ms_mean": round(sum(times) / max(1, len(times)), 1)}
    for level, rows in scores.items():
        out[level] = {key: round(sum(r[key] for r in rows) / len(rows), 3) for key in rows[0]}
    return out


def _turn_doc(hit: Any, turns: dict[str, dict[int, str]]) -> str:
    chunk = getattr(hit, "chunk", None)
    match = _TURN.search(chunk.section) if chunk is not None and chunk.section else None
    if match is None:
        return f"{hit.id}#?"
    return turns.get(hit.id, {}).get(int(match.group(1)), f"{hit.id}#{match.group(1)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--chunks", action="store_true", help="also score group=False")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for data in args.data:
        result = run_set(data, args.chunks)
        print(json.dumps(result) if args.json else json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
