"""One peer search engine, driven by `bench/peers.py` over stdin/stdout (JSON lines).

    python bench/peer_driver.py ENGINE --vault DIR --work DIR            # serve commands
    python bench/peer_driver.py ENGINE --vault DIR --work DIR --once Q   # fresh process
    python bench/peer_driver.py ENGINE --eval DIR                        # relevance

ENGINE is `fts5` (SQLite FTS5 with the porter stemmer, stdlib: the ratio baseline), `tantivy`
(tantivy-py, `en_stem`: the practical limit), `original` (the original openCodeMemory,
`ocm-session-memory` 0.2.0, through its own `ocm__checkpoint` / `ocm__search_sessions`) or
`basic-memory` (0.24.1, through its own sync, `write_note` and `search_notes`; see its class).
It runs under whichever Python has the engine installed (peers.py makes a separate venv for
tantivy and the original, and a Python 3.12 one for basic-memory), so it imports nothing of
ours and only the standard library besides its engine.

fts5 and tantivy index the vault's Markdown as a plain tool would: one document per note (a
title from the goal or the memory title, the rest as body), a `(mtime_ns, size)` table of every
note, and before a search that must see edits made outside (`refresh_search`) a scan of the
folder that re-indexes what changed. The original never re-reads Markdown: it has no such step.

Commands (one JSON object a line; every reply carries `seconds` of the timed part):
  {"op": "build"}                     index every note of the vault
  {"op": "search", "q": Q}            warm search, top 10 note paths in `hits`
  {"op": "refresh_search", "q": Q}    pick up changed notes, then search (null for original)
  {"op": "write", "title": T, "text": X}   store one new note through the engine's write path
  {"op": "edit_found"}                edit a note on disk outside the engine, then search for the
                                      new word with the engine's normal search path: `found`
  {"op": "quit"}
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

K = 10
WORD = re.compile(r"[A-Za-z0-9]+")


def words(text: str) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in WORD.findall(text)))


def split_note(text: str) -> tuple[str, str]:
    """(title, body) of an ocm note: the goal (session) or `title:` (memory), and the rest."""
    title, body = "", text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            for line in text[4:end].splitlines():
                if line.startswith("title:"):
                    title = line[6:].strip()
            body = text[end + 4:]
    if not title:
        match = re.search(r"^## Goal\n+(.+)$", body, re.M)
        title = match.group(1).strip() if match else ""
    return title, body


def note_files(vault: Path) -> dict[str, tuple[int, int]]:
    """Every note's `(mtime_ns, size)`, keyed by its path relative to the vault."""
    out: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".md") and not name.startswith("."):
                path = os.path.join(folder, name)
                st = os.stat(path)
                out[os.path.relpath(path, vault)] = (st.st_mtime_ns, st.st_size)
    return out


class Fts5:
    """SQLite FTS5 (porter over unicode61), title weighted 10 against body 1, OR of words."""

    def __init__(self, vault: Path, work: Path) -> None:
        self.vault = vault
        work.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(work / "fts5.db")
        self.db.executescript(
            "CREATE VIRTUAL TABLE IF NOT EXISTS notes USING fts5(path UNINDEXED, title, body,"
            " tokenize='porter unicode61');"
            "CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime INTEGER, size INTEGER,"
            " doc INTEGER);")

    def _put(self, rel: str, sig: tuple[int, int], fresh: bool = False) -> None:
        """Index one note; its old row is found through `files` (by rowid: `path` is not
        indexed in the FTS table, so a delete by path would scan every row)."""
        title, body = split_note((self.vault / rel).read_text(encoding="utf-8"))
        if not fresh:
            self._drop(rel)
        cursor = self.db.execute("INSERT INTO notes(path, title, body) VALUES (?, ?, ?)",
                                 (rel, title, body))
        self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                        (rel, *sig, cursor.lastrowid))

    def _drop(self, rel: str) -> None:
        found = self.db.execute("SELECT doc FROM files WHERE path = ?", (rel,)).fetchall()
        for (doc,) in found:
            self.db.execute("DELETE FROM notes WHERE rowid = ?", (doc,))

    def build(self) -> int:
        files = note_files(self.vault)
        with self.db:
            self.db.execute("DELETE FROM notes")
            self.db.execute("DELETE FROM files")
            for rel, sig in files.items():
                self._put(rel, sig, fresh=True)
        return len(files)

    def refresh(self) -> None:
        known = {p: (m, s) for p, m, s in self.db.execute("SELECT path, mtime, size FROM files")}
        now = note_files(self.vault)
        with self.db:
            for rel, sig in now.items():
                if known.get(rel) != sig:
                    self._put(rel, sig)
            for rel in known.keys() - now.keys():
                self._drop(rel)
                self.db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def search(self, query: str, k: int = K) -> list[str]:
        terms = words(query)
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.db.execute(
            "SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes, 0, 10, 1) LIMIT ?",
            (match, k))
        return [r[0] for r in rows]

    def write(self, rel: str, text: str) -> None:
        path = self.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        st = path.stat()
        with self.db:
            self._put(rel, (st.st_mtime_ns, st.st_size))


class Tantivy:
    """tantivy-py with the `en_stem` tokenizer, title boosted like FTS5's, OR of words."""

    def __init__(self, vault: Path, work: Path) -> None:
        import tantivy

        self.tantivy = tantivy
        self.vault = vault
        self.folder = work / "tantivy"
        self.folder.mkdir(parents=True, exist_ok=True)
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("path", stored=True, tokenizer_name="raw")
        builder.add_text_field("title", tokenizer_name="en_stem")
        builder.add_text_field("body", tokenizer_name="en_stem")
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema, path=str(self.folder))
        self.sigs: dict[str, tuple[int, int]] = {}
        sig_file = self.folder / "sigs.json"
        if sig_file.exists():
            self.sigs = {k: tuple(v) for k, v in json.loads(sig_file.read_text()).items()}

    def _doc(self, rel: str) -> Any:
        title, body = split_note((self.vault / rel).read_text(encoding="utf-8"))
        return self.tantivy.Document(path=rel, title=title, body=body)

    def _save_sigs(self) -> None:
        (self.folder / "sigs.json").write_text(json.dumps(self.sigs))

    def build(self) -> int:
        files = note_files(self.vault)
        writer = self.index.writer()
        writer.delete_all_documents()
        for rel in files:
            writer.add_document(self._doc(rel))
        writer.commit()
        writer.wait_merging_threads()
        self.sigs = files
        self._save_sigs()
        self.index.reload()
        return len(files)

    def _apply(self, changed: list[str], gone: list[str]) -> None:
        writer = self.index.writer()
        for rel in changed + gone:
            writer.delete_documents_by_term("path", rel)
        for rel in changed:
            writer.add_document(self._doc(rel))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    def refresh(self) -> None:
        now = note_files(self.vault)
        changed = [rel for rel, sig in now.items() if self.sigs.get(rel) != tuple(sig)]
        gone = list(self.sigs.keys() - now.keys())
        if changed or gone:
            self._apply(changed, gone)
            self.sigs = now
            self._save_sigs()

    def search(self, query: str, k: int = K) -> list[str]:
        terms = words(query)
        if not terms:
            return []
        parsed = self.index.parse_query(" ".join(terms), ["title", "body"],
                                        field_boosts={"title": 10.0})
        searcher = self.index.searcher()
        return [searcher.doc(addr)["path"][0] for _, addr in searcher.search(parsed, k).hits]

    def write(self, rel: str, text: str) -> None:
        path = self.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        st = path.stat()
        self._apply([rel], [])
        self.sigs[rel] = (st.st_mtime_ns, st.st_size)
        self._save_sigs()


def _sections(body: str) -> dict[str, list[str]]:
    """Bullets under each `##`/`###` heading of an ocm session note."""
    out: dict[str, list[str]] = defaultdict(list)
    heading = ""
    for line in body.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip().lower()
        elif line.startswith("- ") and heading:
            out[heading].append(line[2:].strip())
    return out


class Original:
    """The original openCodeMemory (ocm-session-memory 0.2.0): SQLite FTS5 behind its own
    checkpoint and search tools, Markdown rendered from the database."""

    def __init__(self, vault: Path, work: Path) -> None:
        self.vault = vault
        self.project = work / "original-project"
        (self.project / ".openCodeMemory").mkdir(parents=True, exist_ok=True)
        os.environ["OCM_PROJECT_DIR"] = str(self.project)
        from ocm.storage.db import Database
        from ocm.tools import checkpoint, search

        self.db = Database.init(self.project / ".openCodeMemory" / "memory.db")
        checkpoint._init(self.db)
        search._init(self.db)
        self.checkpoint = checkpoint.ocm__checkpoint
        self.search_sessions = search.ocm__search_sessions
        self.n = 0

    def _store(self, sid: str, text: str) -> None:
        title, body = split_note(text)
        sections = _sections(body)
        summary = sections.get("work done") or [" ".join(body.split())[:4000]]
        self.checkpoint(sid, goal=title or None, tool="claude-code",
                        work_completed=sections.get("✅ work completed") or None,
                        work_pending=sections.get("🔲 work to be completed") or None,
                        work_summary=summary,
                        decisions=sections.get("architecture decisions") or None)

    def build(self) -> int:
        files = note_files(self.vault)
        for rel in files:
            self.n += 1
            self._store(f"s{self.n:07d}", (self.vault / rel).read_text(encoding="utf-8"))
        return len(files)

    def search(self, query: str, k: int = K) -> list[str]:
        found = self.search_sessions(query, limit=k)
        return [] if isinstance(found, str) else [r["session_id"] for r in found]

    def write(self, rel: str, text: str) -> None:
        self.n += 1
        self._store(f"s{self.n:07d}", text)


class BasicMemory:
    """basic-memory (0.24.1, Python >= 3.12) through its own paths: the `bm reindex --search`
    sync of a Markdown folder into its SQLite index (build, refresh), its `write_note` MCP tool
    (write) and its `search_notes` MCP tool (search), all in one event loop in this process.

    It rewrites the notes it syncs (it adds a `permalink:` to their frontmatter), so it gets its
    own copy of the vault (`WORK/bm-vault`), mirrored from the shared one before each build or
    refresh, outside the timed part. Its home and config (`BASIC_MEMORY_CONFIG_DIR`, database
    included) live under WORK. It never reaches the network: its promo/analytics events are off
    (`BASIC_MEMORY_NO_PROMOS`), and so are Logfire and update checks; search is `text` (its
    SQLite FTS5), by its own `default_search_type`, since vector search would fetch an
    embedding model from Hugging Face (`HF_HUB_OFFLINE` makes sure it cannot). On a Python
    whose sqlite3 cannot load extensions (pyenv's, here) it is keyword-only anyway."""

    loop: asyncio.AbstractEventLoop | None = None

    def __init__(self, vault: Path, work: Path, project: str = "bench") -> None:
        self.source, self.project = vault, project
        self.vault = work / f"bm-{project}"
        self.vault.mkdir(parents=True, exist_ok=True)
        config_dir = work / "bm-config"
        config_dir.mkdir(parents=True, exist_ok=True)
        os.environ.update(HOME=str(work / "bm-home"), BASIC_MEMORY_CONFIG_DIR=str(config_dir),
                          BASIC_MEMORY_NO_PROMOS="1", HF_HUB_OFFLINE="1",
                          LOGFIRE_IGNORE_NO_CONFIG="1")
        config_file = config_dir / "config.json"
        config = json.loads(config_file.read_text()) if config_file.exists() else {
            "projects": {}, "default_project": project, "default_search_type": "text",
            "auto_update": False, "logfire_enabled": False, "cloud_promo_opt_out": True}
        if project not in config["projects"]:
            config["projects"][project] = {"path": str(self.vault)}
            config_file.write_text(json.dumps(config))
        from basic_memory.cli.commands.db import _reindex
        from basic_memory.config import ConfigManager
        from basic_memory.mcp.tools import search_notes, write_note

        self.reindex, self.config = _reindex, ConfigManager
        self.search_notes, self.write_note = search_notes, write_note
        if BasicMemory.loop is None:
            BasicMemory.loop = asyncio.new_event_loop()
        self.mirrored: dict[str, tuple[int, int]] = {}

    def _run(self, coro: Any) -> Any:
        assert self.loop is not None
        return self.loop.run_until_complete(coro)

    def mirror(self) -> None:
        """Copy the notes that changed in the shared vault into basic-memory's folder."""
        now = note_files(self.source)
        for rel, sig in now.items():
            if self.mirrored.get(rel) != sig:
                (self.vault / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.source / rel, self.vault / rel)
        for rel in self.mirrored.keys() - now.keys():
            (self.vault / rel).unlink(missing_ok=True)
        self.mirrored = now

    def refresh(self) -> None:
        """`bm reindex --search --project P`: its sync of changed files into its index."""
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
            self._run(self.reindex(self.config().config, search=True, embeddings=False,
                                   full=False, project=self.project))

    def build(self) -> int:
        self.refresh()
        return len(note_files(self.vault))

    def search(self, query: str, k: int = K) -> list[str]:
        found = self._run(self.search_notes(query=query, project=self.project, page_size=k,
                                            output_format="json"))
        if isinstance(found, str):
            raise RuntimeError(f"basic-memory search failed: {found[:200]}")
        return list(dict.fromkeys(r["file_path"] for r in found["results"]))

    def write(self, rel: str, text: str) -> None:
        title, body = split_note(text)
        done = self._run(self.write_note(title=title, content=body.strip(),
                                         directory=str(Path(rel).parent), project=self.project,
                                         output_format="json"))
        if not isinstance(done, dict) or "file_path" not in done:
            raise RuntimeError(f"basic-memory write failed: {str(done)[:200]}")


ENGINES = {"fts5": Fts5, "tantivy": Tantivy, "original": Original,
           "basic-memory": BasicMemory}


def edit_found(engine: Any, name: str, serial: int) -> bool:
    """Append a new word to a note on disk, as an editor would, then search for it."""
    word = f"zqxedit{serial}w"
    if name == "original":  # its Markdown is rendered from its database, in its own folder
        target = sorted((engine.project / ".openCodeMemory" / "sessions").glob("*.md"))[0]
    else:  # the notes the engine reads: the vault, or its own copy (basic-memory)
        target = engine.vault / sorted(note_files(engine.vault))[0]
    with target.open("a", encoding="utf-8") as fh:
        fh.write(f"\n- hand edit: {word}\n")
    if name != "original":
        engine.refresh()
    return bool(engine.search(word))


def serve(engine: Any, name: str) -> None:
    serial = 0
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "quit":
            break
        if op in ("build", "refresh_search") and hasattr(engine, "mirror"):
            engine.mirror()  # basic-memory's own copy of the vault, untimed
        t0, cpu0 = time.perf_counter(), time.process_time()
        reply: dict[str, Any] = {}
        if op == "build":
            reply["notes"] = engine.build()
        elif op == "search":
            reply["hits"] = engine.search(cmd["q"])
        elif op == "refresh_search":
            if name == "original":
                reply["unsupported"] = True
            else:
                engine.refresh()
                reply["hits"] = engine.search(cmd["q"])
        elif op == "write":
            serial += 1
            rel = f"peer-writes/{name}-{serial:05d}.md"
            # Beside the notes (fts5, tantivy), so later scans see it like any other note.
            engine.write(rel, f"---\ntitle: {cmd['title']}\n---\n\n{cmd['text']}\n")
        elif op == "edit_found":
            serial += 1
            reply["found"] = edit_found(engine, name, serial)
        reply["seconds"] = time.perf_counter() - t0
        reply["cpu_seconds"] = time.process_time() - cpu0
        print(json.dumps(reply), flush=True)


def ndcg(ranked: list[str], relevant: set[str], k: int = K) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / idcg if idcg else 0.0


def evaluate(name: str, data: Path) -> dict[str, Any]:
    """nDCG@10 on an eval set (see /work/shared/eval/README.md): one index per group, every
    document stored through the engine's write path, each query searched in its own group."""
    docs = [json.loads(x) for x in (data / "corpus.jsonl").read_text().splitlines() if x.strip()]
    queries = [json.loads(x) for x in (data / "queries.jsonl").read_text().splitlines()
               if x.strip()]
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in (data / "qrels.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and float(parts[2]) > 0:
            qrels[parts[0]].add(parts[1])
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for doc in docs:
        groups[str(doc.get("group"))].append(doc)
    scores: list[float] = []
    empty = 0
    with tempfile.TemporaryDirectory(prefix=f"peer-{name}-") as tmp:
        for n, (group, gdocs) in enumerate(groups.items()):
            vault = Path(tmp) / f"vault-{n}"
            vault.mkdir()
            # basic-memory: one project per group, in one config and database
            engine = (BasicMemory(vault, Path(tmp) / "work", project=f"g{n}")
                      if name == "basic-memory" else ENGINES[name](vault, Path(tmp) / f"work-{n}"))
            to_doc: dict[str, str] = {}
            for doc in gdocs:
                body = doc.get("text") or ""
                title = " ".join(str(doc.get("title") or "").split())
                text = f"---\ntitle: {title}\n---\n\n{body}\n"
                if name == "original":
                    engine.n += 1
                    sid = f"s{engine.n:07d}"
                    engine._store(sid, text)
                    to_doc[sid] = str(doc["id"])
                else:  # into the folder the engine indexes (basic-memory's own copy)
                    rel = f"{len(to_doc):06d}.md"
                    (engine.vault / rel).write_text(text, encoding="utf-8")
                    to_doc[rel] = str(doc["id"])
            if name != "original":
                engine.build()
            for q in queries:
                if str(q.get("group")) != group or q["id"] not in qrels:
                    continue
                ranked = list(dict.fromkeys(to_doc.get(h, h) for h in engine.search(q["text"])))
                empty += not ranked
                scores.append(ndcg(ranked, qrels[q["id"]]))
            if name == "original":
                engine.db.close()
    return {"ndcg@10": round(sum(scores) / len(scores), 4) if scores else None,
            "queries": len(scores), "no_result": empty}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("engine", choices=sorted(ENGINES))
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--once", metavar="QUERY")
    ap.add_argument("--eval", type=Path, metavar="DIR")
    args = ap.parse_args()
    if args.eval:
        print(json.dumps(evaluate(args.engine, args.eval)))
        return
    if not (args.vault and args.work):
        ap.error("--vault and --work are needed unless --eval is given")
    engine = ENGINES[args.engine](args.vault, args.work)
    if args.once is not None:
        print(json.dumps({"hits": engine.search(args.once)}))
        return
    print(json.dumps({"ready": True}), flush=True)
    serve(engine, args.engine)


if __name__ == "__main__":
    main()
