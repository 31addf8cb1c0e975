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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from whoosh import index as windex
from whoosh.writing import LockError

from ocm.vault.atomic import atomic_write_text, locked
from ocm.vault.errors import OcmError
from ocm.vault.store import Vault, read_document

from .documents import memory_fields, session_fields
from .schema import SCHEMA_VERSION, build_schema

MANIFEST = "manifest.json"
INDEX_LOCK = "index"
WRITER_TIMEOUT_S = 30.0
# Above this many changed notes a rebuild from scratch beats incremental updates.
REBUILD_FRACTION = 0.5
MAX_SEGMENTS_BEFORE_MERGE = 24

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
        self.broken: dict[str, str] = {}

    # -- manifest -----------------------------------------------------------------
    def _manifest_path(self) -> Path:
        return self.dir / MANIFEST

    def _load_manifest(self) -> dict | None:
        try:
            data = json.loads(self._manifest_path().read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError, OSError):
            return None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            return None
        return data

    def _save_manifest(self, notes: dict[str, list[int]], broken: dict[str, list]) -> None:
        generation = self._ix.latest_generation() if self._ix is not None else -1
        payload = {"schema": SCHEMA_VERSION, "generation": generation, "notes": notes,
                   "broken": broken}
        atomic_write_text(self._manifest_path(), json.dumps(payload, separators=(",", ":")))

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
        if self.dir.exists():
            shutil.rmtree(self.dir)
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
        scan = self._scan()
        manifest = None if force_rebuild else self._load_manifest()
        if manifest is not None and not force_rebuild:
            known = manifest.get("notes", {})
            broken = manifest.get("broken", {})
            changed, deleted = _diff(scan, known, broken)
            if not changed and not deleted and self.dir.exists():
                self.broken = {k: v[1] for k, v in broken.items()}
                return report
        self.vault.ensure_layout()
        with locked(self.vault.locks_dir, INDEX_LOCK):
            try:
                return self._sync_locked(report, progress, force_rebuild)
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
                     force_rebuild: bool) -> SyncReport:
        scan = self._scan()  # again, under the lock: another process may have synced
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
        if report.notice:
            print(report.notice, file=sys.stderr)
        return report

    def _write(self, ix: windex.Index, scan: dict[str, tuple[int, int]], changed: list[str],
               deleted: list[str], known: dict[str, list[int]], broken: dict[str, list],
               report: SyncReport, progress: Progress | None) -> None:
        writer = _writer(ix)
        try:
            for rel in deleted:
                writer.delete_by_term("path", rel)
                known.pop(rel, None)
                broken.pop(rel, None)
                report.deleted += 1
            for done, rel in enumerate(changed, 1):
                fields, problem = self._fields(rel)
                sig = list(scan[rel])
                if fields is None:
                    if rel in known:
                        writer.delete_by_term("path", rel)
                        known.pop(rel)
                    broken[rel] = [sig, problem]
                else:
                    fields.update(path=rel, sig=sig)
                    if report.rebuilt:
                        writer.add_document(**fields)
                    else:
                        writer.update_document(**fields)
                    if rel in known:
                        report.updated += 1
                    else:
                        report.added += 1
                    known[rel] = sig
                    broken.pop(rel, None)
                if progress is not None:
                    progress(done, len(changed))
            segments = len(ix._segments()) if hasattr(ix, "_segments") else 0
            writer.commit(merge=segments > MAX_SEGMENTS_BEFORE_MERGE)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        if self._searcher is not None:
            self._searcher = self._refreshed(ix)

    def _refreshed(self, ix: windex.Index):  # -> whoosh.searching.Searcher
        """A new searcher. Not `Searcher.refresh()`: whoosh3 3.54 reuses segment readers by
        segment id, so deletions on a kept segment stay visible (and it raises TypeError
        when a reused reader reports no segments)."""
        assert self._searcher is not None
        self._searcher.close()
        return ix.searcher()

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
            self._searcher = ix.searcher()
        elif not self._searcher.up_to_date():
            self._searcher = self._refreshed(ix)
        return self._searcher


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


def _writer(ix: windex.Index):
    # One process: procs>1 forks, which CPython 3.12+ warns about in threaded hosts.
    deadline = time.monotonic() + WRITER_TIMEOUT_S
    while True:
        try:
            return ix.writer(timeout=2.0, delay=0.05)
        except LockError:
            if time.monotonic() > deadline:
                raise OcmError(f"search index at {ix.storage.folder} stayed locked for "
                               f"{WRITER_TIMEOUT_S:.0f}s; try again") from None
