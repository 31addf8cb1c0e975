"""The derived Whoosh index of one vault, kept fresh from file signatures.

Freshness: every read first compares each note's `(mtime_ns, size)` with a manifest kept
beside the index (reading the signatures back out of Whoosh costs ~200 ms at 10k notes;
the manifest ~2 ms) and re-indexes only what changed. The index is disposable: if it is
missing, unreadable or from another schema version, it is rebuilt from the notes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from whoosh import index as windex
from whoosh.writing import LockError

from ocm.vault.atomic import atomic_write_text, locked
from ocm.vault.errors import OcmError
from ocm.vault.store import Vault, read_document

from .buildcodec import BuildCodec
from .documents import memory_fields, session_fields
from .schema import SCHEMA_VERSION, build_schema, weighting

MANIFEST = "manifest.json"
INDEX_LOCK = "index"
WRITER_TIMEOUT_S = 30.0
# Above this many changed notes a rebuild from scratch beats incremental updates.
REBUILD_FRACTION = 0.5
# Segments of up to this many notes count as small (what incremental commits leave); this
# many small ones are merged into the next commit's segment (a few hundred notes at most).
SMALL_SEGMENT_DOCS = 200
MAX_SMALL_SEGMENTS = 4
MAX_LARGE_SEGMENTS = 12
# Posting-pool budget of each writer in a full rebuild (Whoosh's estimate, in MB).
BUILD_POOL_MB = 512

Progress = Callable[[int, int], None]


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    rebuilt: bool = False
    broken: dict[str, str] = field(default_factory=dict)
    notice: str | None = None

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.deleted


class NoteIndex:
    """One vault's index; keep the object alive to reuse its searcher between queries."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.resolved_root = vault.root.resolve()
        self.dir = vault.index_dir
        self._ix: windex.Index | None = None
        self._searcher = None
        self._manifest_str = str(self.dir / MANIFEST)
        # Processes for a full rebuild; set to >1 only by single-threaded callers (the CLI's
        # `rebuild-index`): whoosh then forks sub-writers, one segment each.
        self.build_procs = 1
        self._manifest_cache: tuple[tuple[int, int, int], dict] | None = None
        self.broken: dict[str, str] = {}

    # -- manifest -----------------------------------------------------------------
    def _load_manifest(self) -> dict | None:
        """The manifest, parsed again only when its file changed (a long-lived process, such
        as the MCP server, then pays one `stat` per check instead of a JSON load)."""
        path = self._manifest_str
        try:
            st = os.stat(path)
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            if self._manifest_cache is not None and self._manifest_cache[0] == key:
                return self._manifest_cache[1]
            with open(path, "rb") as handle:
                data = json.loads(handle.read())
        except (FileNotFoundError, ValueError, OSError):
            self._manifest_cache = None
            return None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            self._manifest_cache = None
            return None
        self._manifest_cache = (key, data)
        return data

    def _save_manifest(self, notes: dict[str, list[int]], broken: dict[str, list]) -> None:
        generation = self._ix.latest_generation() if self._ix is not None else -1
        payload = {"schema": SCHEMA_VERSION, "generation": generation, "notes": notes,
                   "broken": broken}
        # Derived data, so no fsync: a manifest lost in a crash is rebuilt from the index's
        # stored signatures (and a torn one does not parse).
        atomic_write_text(Path(self._manifest_str), json.dumps(payload, separators=(",", ":")),
                          durable=False)
        self._manifest_cache = None

    def _scan(self) -> dict[str, tuple[int, int]]:
        """relpath -> (mtime_ns, size) of every note: the freshness check's only disk work."""
        return self.vault.note_signatures()

    # -- open / rebuild -------------------------------------------------------------
    def _open(self) -> windex.Index | None:
        if self._ix is not None:
            return self._ix
        if not windex.exists_in(str(self.dir)):
            return None
        self._ix = windex.open_dir(str(self.dir))
        return self._ix

    def _create(self) -> windex.Index:
        self.close()
        if self.dir.is_dir():
            shutil.rmtree(self.dir)
        elif self.dir.exists():  # a file where the index folder belongs
            self.dir.unlink()
        self.dir.mkdir(parents=True)
        self._ix = windex.create_in(str(self.dir), build_schema())
        return self._ix

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        self._ix = None

    def sync(self, progress: Progress | None = None, force_rebuild: bool = False) -> SyncReport:
        """Bring the index up to date with the notes; rebuild it if it is damaged."""
        report = SyncReport()
        manifest = None if force_rebuild else self._load_manifest()
        scan = None
        if manifest is not None:
            scan = self._scan()
            known = manifest.get("notes", {})
            broken = manifest.get("broken", {})
            if _unchanged(scan, known, broken):
                self.broken = {k: v[1] for k, v in broken.items()}
                return report
        self.vault.ensure_layout()
        with locked(self.vault.locks_dir, INDEX_LOCK):
            try:
                return self._sync_locked(report, progress, force_rebuild, scan)
            except OcmError:
                raise
            except Exception as exc:  # noqa: BLE001 - any index damage is repaired by a rebuild
                if os.environ.get("OCM_DEBUG"):
                    raise
                report = SyncReport(notice=f"ocm: search index was damaged ({type(exc).__name__}"
                                           f"); rebuilt it from the notes")
                self.close()
                return self._sync_locked(report, progress, True)

    def _sync_locked(self, report: SyncReport, progress: Progress | None,
                     force_rebuild: bool,
                     scan: dict[str, tuple[int, int]] | None = None) -> SyncReport:
        # The scan taken before the lock is reused: a note that changes after it shows a
        # signature the manifest does not hold, so the next check indexes it again.
        scan = scan if scan is not None else self._scan()
        manifest = None if force_rebuild else self._load_manifest()
        ix = None if force_rebuild else self._open()
        if ix is not None and manifest is not None and manifest.get("generation") != (
                ix.latest_generation()):
            manifest = self._manifest_from_index(ix)
        if ix is None or manifest is None:
            if ix is not None and not force_rebuild and not report.notice and self.dir.exists():
                manifest = self._manifest_from_index(ix)
            else:
                if not force_rebuild and self.dir.exists() and any(self.dir.iterdir()):
                    report.notice = report.notice or (
                        "ocm: search index was missing or outdated; rebuilt it from the notes")
                elif not force_rebuild and not self.dir.exists() and scan:
                    # `ocm init` builds the index, so a vault with notes and none lost it.
                    report.notice = report.notice or (
                        f"ocm: search index not found; rebuilt it from {len(scan)} notes")
                ix = self._create()
                manifest = {"notes": {}, "broken": {}}
                report.rebuilt = True
        known: dict[str, list[int]] = dict(manifest.get("notes", {}))
        broken: dict[str, list] = dict(manifest.get("broken", {}))
        changed, deleted = _diff(scan, known, broken)
        if not report.rebuilt and len(changed) > max(200, REBUILD_FRACTION * len(scan)):
            ix = self._create()
            known, broken, report.rebuilt = {}, {}, True
            changed, deleted = _diff(scan, known, broken)
        if changed or deleted:
            self._write(ix, scan, changed, deleted, known, broken, report, progress)
        self._save_manifest(known, broken)
        self.broken = {k: v[1] for k, v in broken.items()}
        report.broken = dict(self.broken)
        return report  # the notice is shown once, by whoever called (Project.notices)

    def _write(self, ix: windex.Index, scan: dict[str, tuple[int, int]], changed: list[str],
               deleted: list[str], known: dict[str, list[int]], broken: dict[str, list],
               report: SyncReport, progress: Progress | None) -> None:
        writer = _writer(ix, procs=self.build_procs if report.rebuilt else 1,
                         rebuild=report.rebuilt)
        # One reader for every delete: `update_document` and a bare `delete_by_term` open a
        # reader over all segments per call (~10 ms each at 10k notes). `path` is the only
        # unique field, so delete-by-path + add is exactly what update_document does.
        finder = None if report.rebuilt else writer.searcher()
        try:
            for rel in deleted:
                writer.delete_by_term("path", rel, searcher=finder)
                known.pop(rel, None)
                broken.pop(rel, None)
                report.deleted += 1
            for done, rel in enumerate(changed, 1):
                fields, problem = self._fields(rel)
                sig = list(scan[rel])
                if fields is None:
                    if rel in known:
                        writer.delete_by_term("path", rel, searcher=finder)
                        known.pop(rel)
                    broken[rel] = [sig, problem]
                else:
                    fields.update(path=rel, sig=sig)
                    if finder is not None:
                        writer.delete_by_term("path", rel, searcher=finder)
                    writer.add_document(**fields)
                    if rel in known:
                        report.updated += 1
                    else:
                        report.added += 1
                    known[rel] = sig
                    broken.pop(rel, None)
                if progress is not None:
                    progress(done, len(changed))
            if report.rebuilt:
                writer.commit(merge=False)
            else:
                if finder is not None:
                    finder.close()
                    finder = None
                writer.commit(mergetype=_merge_small)
        except BaseException:
            if finder is not None:
                with contextlib.suppress(Exception):
                    finder.close()
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        if self._searcher is not None:
            self._searcher = self._refreshed(ix)

    def _refreshed(self, ix: windex.Index):  # -> whoosh.searching.Searcher
        """A searcher over the latest generation that keeps the already open reader of every
        segment that did not change. Not `Searcher.refresh()`: whoosh3 3.54 reuses segment
        readers by segment id alone, so deletions on a kept segment stay visible (and it
        raises TypeError when a reused reader reports no segments). A segment's deletions
        only ever grow, so (segment id, deleted count) identifies what a reader shows."""
        from whoosh.reading import EmptyReader, MultiReader, SegmentReader
        from whoosh.searching import Searcher

        old = self._searcher
        reusable: dict[tuple[str, int], object] = {}
        if old is not None:
            for reader, _ in old.ixreader.leaf_readers():
                segment = reader.segment() if hasattr(reader, "segment") else None
                if segment is not None and not getattr(reader, "is_closed", False):
                    reusable[(segment.segment_id(), segment.deleted_count())] = reader
        toc = ix._read_toc()
        readers, opened = [], []
        try:
            for segment in toc.segments:
                reader = reusable.pop((segment.segment_id(), segment.deleted_count()), None)
                if reader is None:
                    reader = SegmentReader(ix.storage, toc.schema, segment,
                                           generation=toc.generation)
                    opened.append(reader)
                readers.append(reader)
        except BaseException:
            for reader in opened:  # the old searcher still owns every reused reader
                with contextlib.suppress(Exception):
                    reader.close()
            raise
        for reader in reusable.values():  # segments merged away or with new deletions
            with contextlib.suppress(Exception):
                reader.close()
        if not readers:
            top = EmptyReader(toc.schema)
        else:
            # A MultiReader even for one segment: it carries this generation, which a
            # reused SegmentReader would not (and `up_to_date` compares generations).
            top = MultiReader(readers, generation=toc.generation)
        # The old searcher is dropped, not closed: that would close the readers kept above.
        return Searcher(top, fromindex=ix, weighting=weighting())

    def _fields(self, rel: str) -> tuple[dict | None, str]:
        path = self.vault.root / rel
        try:
            doc = read_document(path)
        except OcmError as exc:
            return None, str(getattr(exc, "problem", exc))
        except OSError as exc:
            return None, f"unreadable ({exc.strerror})"
        try:
            if self.vault.kind_of(path) == "session":
                return session_fields(doc, path.stem), ""
            return memory_fields(doc, path.stem, self.vault.scope), ""
        except Exception as exc:  # noqa: BLE001 - one odd note must not stop the others
            return None, f"could not be indexed ({type(exc).__name__}: {exc})"

    def _manifest_from_index(self, ix: windex.Index) -> dict:
        notes = {}
        with ix.searcher() as searcher:
            for stored in searcher.all_stored_fields():
                sig = stored.get("sig")
                if stored.get("path") and isinstance(sig, list | tuple):
                    notes[stored["path"]] = list(sig)
        old = self._load_manifest() or {}
        return {"notes": notes, "broken": old.get("broken", {})}

    # -- reading ------------------------------------------------------------------
    def searcher(self):  # -> whoosh.searching.Searcher
        """A searcher over the freshest committed generation, reused while current."""
        ix = self._open()
        if ix is None:
            self.sync()
            ix = self._open()
        assert ix is not None
        if self._searcher is None:
            self._searcher = ix.searcher(weighting=weighting())
        elif not self._searcher.up_to_date():
            self._searcher = self._refreshed(ix)
        return self._searcher


def _unchanged(scan: dict[str, tuple[int, int]], known: dict[str, list[int]],
               broken: dict[str, list]) -> bool:
    """The no-op check: True when every note has the signature the manifest recorded."""
    if len(scan) != len(known) + len(broken):
        return False
    get = known.get
    for rel, (mtime, size) in scan.items():
        sig = get(rel)
        if sig is None:
            entry = broken.get(rel)
            if entry is None:
                return False
            sig = entry[0]
        if sig[0] != mtime or sig[1] != size:
            return False
    return True


def _diff(scan: dict[str, tuple[int, int]], known: dict[str, list[int]],
          broken: dict[str, list]) -> tuple[list[str], list[str]]:
    changed = []
    for rel, sig in scan.items():
        current = list(sig)
        if known.get(rel) == current:
            continue
        if rel in broken and broken[rel][0] == current:
            continue
        changed.append(rel)
    deleted = [rel for rel in list(known) + list(broken) if rel not in scan]
    return sorted(changed), sorted(set(deleted))


def _merge_small(writer, segments):  # -> list of the segments kept as they are
    """Merge policy for incremental commits: fold the small segments that updates leave
    behind into the one being written, once there are enough of them to slow searches down.
    Large segments (a build's) are never rewritten here: that would stall a search for
    seconds (reference §4: 70 s at 10k). Whoosh's default policy is the same idea with a
    Fibonacci bound; this one also caps the count of large segments."""
    from whoosh.reading import SegmentReader

    small = [s for s in segments if s.doc_count_all() <= SMALL_SEGMENT_DOCS]
    large = sorted((s for s in segments if s.doc_count_all() > SMALL_SEGMENT_DOCS),
                   key=lambda s: s.doc_count_all())
    merge = small if len(small) >= MAX_SMALL_SEGMENTS else []
    if len(large) > MAX_LARGE_SEGMENTS:  # once in a long while: the smaller half of them
        merge += large[: len(large) // 2]
    for segment in merge:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return [s for s in segments if s not in merge]


def _writer(ix: windex.Index, procs: int = 1, rebuild: bool = False):
    """A writer, waiting for another process's; `procs>1` only for a full rebuild from a
    single-threaded process (the CLI): it forks, which is unsafe in threaded hosts."""
    deadline = time.monotonic() + WRITER_TIMEOUT_S
    kwargs: dict = {}
    if rebuild:
        # Same files as Whoosh's default codec, with a fraction of its per-posting work.
        kwargs["codec"] = BuildCodec()
        # Each (sub-)writer sorts its postings in memory up to this estimate, then spills
        # sorted runs to disk and merges them at commit: at Whoosh's default (128) a
        # 10k-note build spilled several runs, and pickling, reloading and heap-merging
        # every posting took ~30 % of the build. Peak memory is about this much per writer.
        kwargs["limitmb"] = BUILD_POOL_MB
    if procs > 1 and threading.active_count() == 1 and hasattr(os, "fork"):
        kwargs.update(procs=procs, multisegment=True)
    while True:
        try:
            return ix.writer(timeout=2.0, delay=0.05, **kwargs)
        except LockError:
            if time.monotonic() > deadline:
                raise OcmError(f"search index at {ix.storage.folder} stayed locked for "
                               f"{WRITER_TIMEOUT_S:.0f}s; try again") from None
