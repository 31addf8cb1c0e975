"""The derived Whoosh index of one vault, kept fresh from file signatures.

Freshness: every read first compares each note's `(mtime_ns, size)` with a manifest kept
beside the index (reading the signatures back out of Whoosh costs ~200 ms at 10k notes;
the manifest ~2 ms) and re-indexes only what changed. A process that reads more than once
(the MCP server) learns what changed from kernel events instead of a full `stat` scan
(ocm/vault/freshness/watch.py). The index is disposable: if it is missing, unreadable or from
another schema version, it is rebuilt from the notes.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile
from whoosh.writing import LockError

from ocm.vault.atomic import atomic_write_bytes, locked
from ocm.vault.errors import OcmError
from ocm.vault.freshness import scanahead
from ocm.vault.freshness.scan import NOTE_DIRS, names
from ocm.vault.freshness.watch import NoteWatch
from ocm.vault.racy import settled
from ocm.vault.store import Vault

from . import checksums, termtables
from .documents import memory_fields, session_fields, transcript_fields
from .filechecks import sweep_partial
from .livestats import LiveSearcher
from .manifest import MANIFEST, Manifest
from .rankcolumn import add_row
from .schema import BM25_B, BM25_K1, build_schema, weighting

termtables.install()  # Whoosh's term files opened with one read of their directory

if TYPE_CHECKING:
    from pathlib import Path

    from .buildwriter import BuildWriter
    from .embed import Embedder
    from .vectors import Embedded, EmbedText, VectorStore

INDEX_LOCK = "index"
# The listing taken ahead (ocm/vault/freshness/scanahead.py) last found matching the manifest, after
# a line naming that manifest's files' (inode, mtime, size).
LISTING = "scan.listing"
# A commit of at most this many notes keeps their texts to embed (a rebuild keeps all:
# it wipes the embeddings with the rest of the index, so every note is embedded after).
EMBED_READY_MAX = 1000
WRITER_TIMEOUT_S = 30.0
# Above this many changed notes a rebuild from scratch beats incremental updates.
REBUILD_FRACTION = 0.5
# Segments of up to this many notes count as small (what incremental commits leave); this
# many small ones are merged into the next commit's segment (a few hundred notes at most).
SMALL_SEGMENT_DOCS = 200
MAX_SMALL_SEGMENTS = 4
MAX_LARGE_SEGMENTS = 12
# Full scans before the index watches its folders instead (see NoteIndex._scan).
WATCH_AFTER_SCANS = 2
# A full rebuild of at least this many notes is shared among `build_procs` processes.
FORK_MIN_NOTES = 200
# A build (of a new index) under way or interrupted: while this file is in the index
# folder, the notes the manifest holds are indexed and the others are still to be added,
# which the next sync does (it resumes; it does not start over).
BUILDING = "building"
# A build without a time budget commits its notes in at least this many batches (a `kill -9`
# loses one batch's work at most), of at least BUILD_BATCH_MIN notes each, and more where
# its notes' work (size + NOTE_BYTES) exceeds BUILD_BATCH_WORK a batch (however few notes
# each then has): what a writer holds until its segment is written is in proportion to the
# bytes it read (~6 bytes a byte: ~13 KB a memory note, ~24 KB a session at 100k), and the
# batch is shared among the build's processes. More batches make more segments (one a
# process a batch): at most MAX_LARGE_SEGMENTS, which an incremental commit would otherwise
# start merging. Each batch costs wall: a core idles while the builder commits and forks
# the next batch's sub-writers, and at each batch's end while the process whose run took
# longer finishes (±0.5 CPU-s at 10k, either way). A 10k build is one batch (BUILD_BATCH_MIN
# 10,000; 20k is two): bench/peers.py at 10k, 6 runs a side, 722-920 notes/s against
# 553-759 with two batches (docs/decisions.md, "Session 19's merges"). Two batches had been
# kept for a while because peers.py's search after 10 notes changed (the median of 5
# rounds) came out slower on the 2-segment index: not from the larger segments but from
# where Python's full garbage collection fell, which a replaced scorer's candidates made
# ~2x costlier (`PostingScorer.retire`, branch batch10); with them gone it is 0.86-1.11x
# FTS5's (target 1.5x).
BUILD_BATCHES = 4
BUILD_BATCH_MIN = 10000
BUILD_BATCH_WORK = 48 << 20
# A build of fewer notes than this is done whole even by a sync with a time budget.
BUDGET_MIN_NOTES = 1000
# The share of a sync's time budget spent reading notes: committing what it read (each
# term's postings and saved postings written) takes about as long again (100k team vault,
# 85-222 notes read: 0.8-1.1x the reading's CPU), and the budget bounds both.
READ_SHARE = 0.5
# The work of indexing a note, beside its size, in bytes of its text (a parse, a document).
# (10k bench vault, one process: a session's reading costs 0.646 µs a unit of work, a
# memory's 0.645; per note 1.49 ms + 0.34 µs a byte against 0.77 ms + 0.54 µs a byte.)
NOTE_BYTES = 1000
# The builder's run of a batch against each sub-writer's, in units of work (a note's size
# plus NOTE_BYTES): what a process holds peaks at its run's end (its segment written), so
# runs of the same work peak together; a shorter sub-writer's ends first, and its process
# with all it held is gone before the builder's peaks. That costs time: the sub-writer's core
# idles from its run's end to the builder's (a sixth of each batch's reading at 10k). A batch
# of at most BUILD_BATCH_WORK (bench vaults: 17 MB at 10k notes, 43 at 50k, 57 at 100k) is
# shared evenly instead: its runs are small beside what every process holds anyway (~65 MB),
# and both cores stay busy to the batch's end.
BUILDER_SHARE = 1.2
# A sub-writer reports progress every this many notes.
TICK_NOTES = 50
# The signature in a scan of a note that was listed but not looked at (`stat`) yet: a first
# search with no index lists the notes by name only and looks at those it indexes.
UNSEEN = [-1, -1]

Progress = Callable[[int, int], None]
# What a note's embedding is made of: its words, not its paths or tags.
EMBEDDED_FIELDS = ("goal", "decisions", "todos", "work_summary", "content", "body")


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    rebuilt: bool = False
    broken: dict[str, str] = field(default_factory=dict)
    notice: str | None = None
    # Vault-relative paths of the notes that changed or went (what a read re-checks).
    paths: list[str] = field(default_factory=list)

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
        self._searcher_generation = -1
        # (the index folder's inode, mtime and ctime, the latest generation its listing
        # showed then): `searcher` lists the folder again only once a name in it changed.
        self._generation_seen: tuple[tuple[int, int, int], int] | None = None
        self._scorer = None
        self._manifest = Manifest(self.dir)
        # Processes for a full rebuild; set to >1 only by single-threaded callers (the CLI's
        # `rebuild-index`): whoosh then forks sub-writers, one segment each.
        self.build_procs = 1
        self.broken: dict[str, str] = {}
        # Freshness from kernel events once this object has scanned twice: a process that
        # checks again and again (the MCP server) gains from it, one CLI command does not
        # pay for it; see ocm/vault/freshness/watch.py.
        self.watch_enabled = True
        self._full_scans = 0
        self._watch: NoteWatch | None = None
        self._folders: list[str] | None = None
        self._last_scan: dict[str, list[int]] | None = None
        self._verified: tuple[dict, dict] | None = None
        # With the watch running: the notes it reported since the index last matched the
        # disk (a sync that committed or found nothing to do); None when not known.
        self._since_sync: set[str] | None = None
        self._synced_with: dict | None = None  # the manifest as that sync left it
        self._vectors: VectorStore | None = None  # made on first use
        # (manifest files' key, manifest token) of the listing that last vouched for the
        # index (`_listing_matches`).
        self._listed: tuple[tuple, tuple | None] | None = None
        # A listing taken ahead that `confirm` found changed: the next sync's.
        self._ahead: bytes | None = None
        # The recorded listing `presume` vouched by, for `confirm` to compare.
        self._presumed: tuple[dict, bytes] | None = None
        # The texts to embed of the notes a sync just read (EMBED_READY_MAX at most, or
        # all of a rebuild's): the embeddings after it need not read them again.
        self._embed_ready: dict[str, EmbedText] = {}
        # The embeddings a build's writers made of the notes they read (each on its own
        # core), taken by the vectors' next sync.
        self._embedded: dict[str, Embedded] = {}
        # Seconds a sync may spend building a new index of at least `budget_min_notes`
        # notes, reading (READ_SHARE of them) and committing what it read, before it
        # returns (a first search answered from them); None: until it is whole. A smaller
        # build is always whole (a second or so).
        self.build_budget: float | None = None
        self.budget_min_notes = BUDGET_MIN_NOTES
        # The last scan of notes listed by name only (their signatures UNSEEN).
        self._by_name: dict[str, list[int]] | None = None
        # (notes indexed, notes in the vault) after a sync that left part of a build to do
        # (its budget ran out, or another process is building); None: the index is whole.
        self.progress: tuple[int, int] | None = None
        # Whether that part is left for whoever comes next (no other process is at it).
        self.build_left = False

    # -- manifest -----------------------------------------------------------------
    def _load_manifest(self) -> dict | None:
        """The manifest (ocm/indexer/manifest.py), parsed again only when its files changed
        (a long-lived process, such as the MCP server, then pays two `stat`s per check)."""
        return self._manifest.load()

    def _scan(self, full: bool = False) -> dict[str, list[int]]:
        """relpath -> [mtime_ns, size] of every note: the freshness check's only disk work.
        With a watch running, only the notes it reports are looked at again, unless `full`
        (a rebuild trusts nothing it did not just read)."""
        watch = self._watch
        if watch is not None and self._last_scan is not None and not full:
            changed = watch.changes()
            if changed is not None:
                if not changed:
                    return self._last_scan
                if self._since_sync is not None:
                    self._since_sync.update(changed)
                # Updated in place: a copy cost one dict entry per note on every write
                # (issue #17). What was compared with the manifest no longer holds.
                scan, self._verified = self._last_scan, None
                for rel in changed:
                    sig = self.vault.note_signature(rel)
                    if sig is None:
                        scan.pop(rel, None)
                    else:
                        scan[rel] = sig
                return scan
            self._stop_watch()
        elif (watch is None and self._folders is not None and self.watch_enabled
              and self._full_scans >= WATCH_AFTER_SCANS):
            # Watches go up before the scan below, so nothing after it goes unseen.
            self._watch = NoteWatch.start(str(self.vault.root), NOTE_DIRS,
                                          self._folders)
            if self._watch is None:  # unavailable, or a folder vanished: try again later
                self._full_scans = 0
        folders: list[str] = []
        scan = self.vault.note_signatures(folders)
        self._full_scans += 1
        if self._watch is not None and set(folders) != set(self._folders or ()):
            self._stop_watch()  # folders came or went meanwhile: watch them next time
        self._folders = folders
        self._last_scan = scan
        return scan

    def _stop_watch(self) -> None:
        self._since_sync = None
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def _synced(self) -> None:
        """The manifest (and so the index) now matches the scan just taken: from here on
        the watch's reports are exactly what the index does not hold yet."""
        self._since_sync = set() if self._watch is not None else None
        self._synced_with = self._load_manifest() if self._watch is not None else None

    def _reported(self, manifest: dict | None, scan: dict | None) -> set[str] | None:
        """The only notes that can differ between `scan` and `manifest`: those the watch
        reported since the last sync, while the manifest is still the one that sync left
        (no other process committed) and `scan` is the watch's. None: any note can."""
        if manifest is None or manifest is not self._synced_with or (
                scan is not self._last_scan):
            return None
        return self._since_sync

    def unindexed(self) -> set[str] | None:
        """Vault-relative paths of the notes created, changed or deleted since the index
        last matched the disk, without committing anything: what the watch reported since
        (a superset: a note changed back counts too). None when only a sync can tell (no
        watch running, as in a one-shot process)."""
        if self._watch is None or self._since_sync is None:
            return None
        self._scan()  # takes in the watch's latest reports
        return None if self._since_sync is None else set(self._since_sync)

    def live_count(self, field: str, term: str) -> int:
        """How many live documents of the committed index hold `term` in `field` (an ID
        field such as `type`), without a sync."""
        return self.searcher().live_doc_frequency(field, term)

    # -- open / rebuild -------------------------------------------------------------
    def _open(self) -> windex.Index | None:
        if self._ix is not None:
            return self._ix
        if not windex.exists_in(str(self.dir)):
            return None
        # Its large files read through the check of their blocks (ocm/indexer/checksums.py).
        self._ix = _CheckedStorage(str(self.dir)).open_index()
        return self._ix

    def _create(self) -> windex.Index:
        self._close_index()
        if self.dir.is_dir():
            shutil.rmtree(self.dir)
        elif self.dir.exists():  # a file where the index folder belongs
            self.dir.unlink()
        self.dir.mkdir(parents=True)
        self._ix = windex.create_in(str(self.dir), build_schema())
        return self._ix

    def close(self) -> None:
        self._stop_watch()
        self._last_scan = None
        self._close_index()
        if self._vectors is not None:
            self._vectors.flush()

    def _close_index(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        if self._scorer is not None:
            self._scorer.retire()
        self._scorer = None
        self._ix = None

    def sync(self, progress: Progress | None = None, force_rebuild: bool = False) -> SyncReport:
        """Bring the index up to date with the notes; rebuild it if it is damaged."""
        report = SyncReport()
        self.progress, self.build_left = None, False
        if not force_rebuild and not self._files_sound(report):
            self.close()
            force_rebuild = True
        # A listing taken ahead (ocm/vault/freshness/scanahead.py, one-shot commands): the
        # same bytes as the listing last found matching the manifest, while the manifest's
        # files are as they were then, say nothing changed; the manifest is not even read.
        listing, self._ahead = self._ahead, None
        # (With no manifest and a first answer due, the listing is not waited for.)
        fresh = (self.build_budget is not None and not force_rebuild
                 and not (self.dir / MANIFEST).exists())
        if not force_rebuild and self._last_scan is None and not fresh:
            if listing is None:
                listing = scanahead.take(str(self.vault.root))
            if listing is not None and self._listing_matches(listing):
                self._synced()
                return report
        else:
            listing = None
        manifest = None if force_rebuild else self._load_manifest()
        scan = None
        if manifest is not None:
            known = manifest.get("notes", {})
            broken = manifest.get("broken", {})
            # Only a listing read exactly can later vouch for the index by its bytes.
            scan = scanahead.signatures(listing) if listing is not None else None
            if scan is None:
                listing, scan = None, self._scan()
            verified = self._verified
            # The same scan object (the watch saw nothing) against the same manifest
            # object was already compared: 10k dict lookups saved per quiet check.
            only = self._reported(manifest, scan)
            if ((verified is not None and verified[0] is scan and verified[1] is manifest) or (
                    _unchanged(scan, known, broken) if only is None
                    else not any(_diff(scan, known, broken, only)))) and not (
                        self.dir / BUILDING).exists():  # (a build left its embeddings)
                self._verified = (scan, manifest)
                self.broken = {k: v[1] for k, v in broken.items()}
                if listing is not None:
                    self._save_listing(listing)
                self._synced()
                return report
        if manifest is None and fresh:
            # No index yet, and an answer due within the budget: the notes are listed by
            # name (no `stat` of each, no listing taken ahead to wait for and parse) and
            # only those indexed before it runs out are looked at; the build that finishes
            # the rest scans them all.
            scanahead.discard(str(self.vault.root))
            scan = self._by_name = dict.fromkeys(names(str(self.vault.root)), UNSEEN)
        self.vault.ensure_layout()
        # A budgeted sync does not wait for another process's build: it answers from the
        # notes that build committed so far.
        elsewhere = (self.build_budget is not None and manifest is not None and scan is not None
                     and (self.dir / BUILDING).exists())
        try:
            with locked(self.vault.locks_dir, INDEX_LOCK, **({"timeout": 0} if elsewhere else {})):
                try:
                    return self._sync_locked(report, progress, force_rebuild, scan)
                except OcmError:
                    raise
                except Exception as exc:  # noqa: BLE001 - index damage is repaired by a rebuild
                    if os.environ.get("OCM_DEBUG"):
                        raise
                    report = SyncReport(notice=f"ocm: search index was damaged ("
                                               f"{type(exc).__name__}); rebuilt it from the notes")
                    self.close()
                    try:
                        return self._sync_locked(report, progress, True)
                    finally:  # a rebuild that failed too (a full disk) leaves no partial file
                        sweep_partial(self.dir)
        except _lock_timeout():
            if not elsewhere:
                raise
            assert manifest is not None and scan is not None
            self.progress = (len(manifest.get("notes", {})) + len(manifest.get("broken", {})),
                             len(scan))
            return report

    def _listing_matches(self, listing: bytes) -> bool:
        """Whether `listing` is the one last found matching the manifest, whose files are
        still as they were then; if so, what that check knew is taken from the file."""
        recorded = self._recorded()
        if recorded is None or recorded[1] != listing:
            return False
        self._vouched(recorded[0])
        return True

    def _recorded(self) -> tuple[dict, bytes] | None:
        """The listing last found matching the manifest (its first line, then the listing),
        when that line names the manifest's files as they are now; None otherwise."""
        try:
            with open(self.dir / LISTING, "rb") as handle:
                head = json.loads(handle.readline())
                if not (isinstance(head, dict) and self._names_manifest(head)
                        and isinstance(head.get("broken"), dict)):
                    return None
                # Read at once, as long as it is (a `read()` to the end of 8.7 MB at 100k
                # notes grew its buffer chunk by chunk: ~3x as long; a zeroed `bytearray`
                # read into touched each page twice: ~1.5x).
                size = os.fstat(handle.fileno()).st_size - handle.tell()
                listing = handle.read(size)
                if len(listing) != size:
                    return None
        except (OSError, ValueError):
            return None
        return head, listing

    def _names_manifest(self, head: dict) -> bool:
        """Whether a recorded listing's first line names the manifest's files as they are."""
        return head.get("manifest") == list(self._manifest.files_key() or ())

    def _vouched(self, head: dict) -> None:
        """Take what the check that recorded the listing `head` starts knew."""
        token = head.get("token")
        self.broken = head["broken"]
        self._listed = (tuple(head["manifest"]),
                        tuple(token) if isinstance(token, list) else None)

    def presume(self) -> bool:
        """Take the index as it is, unchecked, while its listing is still being taken ahead
        (ocm/vault/freshness/scanahead.py): True when a listing is under way and the one recorded
        names the manifest's files as they are now. A search can then run before the
        listing is in; `confirm` says afterwards whether its results stand."""
        if self._last_scan is not None or not scanahead.started(str(self.vault.root)) or (
                not self._files_sound(None)):
            return False
        recorded = self._recorded()
        if recorded is None or not isinstance(recorded[0].get("token"), list):
            return False
        self._vouched(recorded[0])
        self._presumed = recorded
        return True

    def confirm(self) -> bool:
        """After a search of a presumed index: True when the listing taken ahead is the
        recorded one byte for byte, the manifest's files are still those `presume` found
        and the search read the generation they describe, i.e. exactly what `sync` would
        have found. False: the listing is kept for the next `sync`, which brings the index
        up to date."""
        presumed, self._presumed = self._presumed, None
        # The listing is compared with the recorded one `presume` read, in place (read
        # while the search waited, not after); the manifest's files are looked at again.
        listing = scanahead.take(str(self.vault.root),
                                 presumed[1] if presumed is not None else None)
        listed = self._listed
        head = presumed[0] if (presumed is not None and listing is presumed[1]
                               and self._names_manifest(presumed[0])) else None
        if (head is not None and listed is not None and listed[1] is not None
                and tuple(head["manifest"]) == listed[0]
                and self._searcher is not None
                and self._searcher_generation == listed[1][1]):
            self._synced()
            return True
        self._listed, self._ahead = None, listing
        return False

    def _files_sound(self, report: SyncReport | None) -> bool:
        """Whether the segment files match their checksums (ocm/indexer/checksums.py).
        With a `report`, a damaged saved-postings file is removed (the scorer decodes the
        segment's own postings instead: same scores) and said in its notice; any other
        damaged file: False, the index is rebuilt. What the check found to record (files
        with no checksum yet) is recorded when no writer
        holds the index lock."""
        sums = self._manifest.sums
        bad, to_record = sums.check(watch=self.watch_enabled)
        removed = []
        while report is not None and bad is not None and bad.endswith(".ocmpost"):
            self.close()
            sums.forget(bad)
            removed.append(bad)
            bad, to_record = sums.check(watch=self.watch_enabled)
        if bad is not None:
            if report is not None:
                report.notice = (f"ocm: search index file {bad} failed its checksum; "
                                 "rebuilt the index from the notes")
            return False
        if removed and report is not None:
            report.notice = (f"ocm: search index file {', '.join(removed)} failed its "
                             "checksum; removed it (scores come from Whoosh's own postings)")
        if to_record:
            with contextlib.suppress(_lock_timeout(), OSError), locked(
                    self.vault.locks_dir, INDEX_LOCK, timeout=0):
                sums.record()
        return True

    def _save_listing(self, listing: bytes) -> None:
        """Record `listing` as matching the manifest as loaded, with what the check knew
        (derived data: no fsync, and a read-only index folder just goes without)."""
        key = self._manifest.key()
        if key is None:
            return
        head = json.dumps({"manifest": list(key), "token": self._manifest.token(),
                           "broken": self.broken})
        with contextlib.suppress(OSError):
            atomic_write_bytes(self.dir / LISTING, head.encode() + b"\n" + listing,
                               durable=False)

    def _sync_locked(self, report: SyncReport, progress: Progress | None,
                     force_rebuild: bool,
                     scan: dict[str, list[int]] | None = None) -> SyncReport:
        # The scan taken before the lock is reused: a note that changes after it shows a
        # signature the manifest does not hold, so the next check indexes it again.
        scan = scan if scan is not None else self._scan(full=force_rebuild)
        manifest = None if force_rebuild else self._load_manifest()
        ix = None if force_rebuild else self._open()
        if scan is self._by_name and (manifest is not None or ix is not None):
            # Listed by name for a new index, but there is one (another process started
            # it meanwhile, or it lost only its manifest): its notes are compared by their
            # signatures, as usual.
            scan = self._scan()
        if ix is not None and manifest is not None and manifest.get("generation") != (
                ix.latest_generation()):
            manifest = self._manifest_from_index(ix)
        # The manifest as stored, which a save may then extend by what changed.
        stored = manifest is not None and manifest is self._load_manifest()
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
        resuming = not report.rebuilt and (self.dir / BUILDING).exists()
        changed, deleted = _diff(scan, known, broken,
                                 None if resuming else self._reported(manifest, scan))
        if not report.rebuilt and not resuming and len(changed) > max(
                200, REBUILD_FRACTION * len(scan)):
            ix = self._create()
            known, broken, report.rebuilt = {}, {}, True
            changed, deleted = _diff(scan, known, broken)
        if report.rebuilt or resuming:
            # Notes edited or deleted since a batch took them are updated as usual; the
            # notes no batch took yet are built.
            # (A new index: every note is new, 100k of them after a clone.)
            edited = [rel for rel in changed if rel in known or rel in broken] if (
                known or broken) else []
            if edited or deleted:
                self._write(ix, scan, edited, deleted, known, broken, report, None)
            if report.rebuilt:
                (self.dir / BUILDING).write_bytes(b"")
            self._embed_ready, self._embedded = {}, {}
            new = [rel for rel in changed if rel not in known and rel not in broken] if (
                known or broken) else changed
            self._build_in_batches(ix, scan, new, known, broken, report, progress)
            # What a read re-checks: the notes this sync read (the others, once built).
            changed = edited + [rel for rel in new if rel in known or rel in broken]
            if self.progress is not None and report.notice:
                report.notice = report.notice.replace("rebuilt it", "building it")
        elif changed or deleted:
            self._write(ix, scan, changed, deleted, known, broken, report, progress)
        report.paths = changed + deleted
        if not (report.rebuilt or resuming) and (report.paths or not stored):
            # (a build saved it after each batch)
            self._manifest.save(ix.latest_generation(), known, broken,
                                report.paths if stored else None)
        if self.progress is None:
            self._synced()
        else:  # the index does not match the scan: no watch report can say what differs
            self._since_sync = self._synced_with = None
        self.broken = {k: v[1] for k, v in broken.items()}
        report.broken = dict(self.broken)
        return report  # the notice is shown once, by whoever called (Project.notices)

    def _write(self, ix: windex.Index, scan: dict[str, list[int]], changed: list[str],
               deleted: list[str], known: dict[str, list[int]], broken: dict[str, list],
               report: SyncReport, progress: Progress | None) -> None:
        writer = _writer(ix)
        # One reader for every delete: `update_document` and a bare `delete_by_term` open a
        # reader over all segments per call (~10 ms each at 10k notes). `path` is the only
        # unique field, so delete-by-path + add is exactly what update_document does.
        finder = self._finder(writer)
        try:
            for rel in deleted:
                writer.delete_by_term("path", rel, searcher=finder)
                known.pop(rel, None)
                broken.pop(rel, None)
                report.deleted += 1
            self._embed_ready = {}
            for done, rel in enumerate(changed, 1):
                fields, problem = self._fields(rel)
                if fields is not None and len(changed) <= EMBED_READY_MAX:
                    self._embed_ready[rel] = _embed_text_of(fields)
                sig = list(scan[rel])
                if fields is None:
                    if rel in known:
                        writer.delete_by_term("path", rel, searcher=finder)
                        known.pop(rel)
                    broken[rel] = [sig, problem]
                else:
                    fields.update(path=rel, sig=sig)
                    add_row(writer.schema, fields)
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
            if finder is not self._searcher:
                finder.close()
            finder = None
            writer.commit(mergetype=lambda w, segments: self._merge_small(
                w, segments, known))
        except BaseException:
            if finder is not None and finder is not self._searcher:
                with contextlib.suppress(Exception):
                    finder.close()
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        if self._searcher is not None:
            self._searcher = self._refreshed(ix)

    def _build_in_batches(self, ix: windex.Index, scan: dict[str, list[int]],
                          rels: list[str], known: dict[str, list[int]],
                          broken: dict[str, list], report: SyncReport,
                          progress: Progress | None) -> None:
        """Build the notes `rels` into `ix` (a new index, or one whose build was cut short),
        committing them in batches, the manifest saved after each: a process killed
        mid-build loses one batch at most, and the next sync resumes. With a
        `build_budget`, the notes read when it runs out are committed and the rest left
        (`progress` says how far it got); once every note is in, the embeddings are made
        and the build is over (the BUILDING mark goes)."""
        from .analysis import code_analyzer
        from .subwriters import give_back_free_memory

        deadline = None if self.build_budget is None or len(rels) < self.budget_min_notes else (
            time.monotonic() + self.build_budget * READ_SHARE)
        ends = _batch_ends(rels, scan, self.build_procs) if deadline is None else []
        done = 0
        while rels:
            # Against a deadline, the newest notes first (a first answer is most often
            # about recent work; after a clone every file is as new as the others, and the
            # path order then puts the latest dated sessions first).
            if deadline is None:
                batch = rels[done:next(end for end in ends if end > done)]
            elif scan is self._by_name:  # (no times known: the last paths first)
                batch = rels[done:][::-1]
            else:
                batch = _newest_first(rels[done:], scan)
            before = len(known) + len(broken)
            step_progress = None
            if progress is not None:
                def step_progress(step: int, _: int, offset: int = done) -> None:
                    assert progress is not None
                    progress(offset + step, len(rels))
            self._build(ix, scan, batch, known, broken, report, step_progress, until=deadline)
            # (a note gone since the scan is neither: the next batch starts after it)
            done += len(batch) if deadline is None else len(known) + len(broken) - before
            # A batch's writers end in reference cycles (Whoosh's writer with its files and
            # column writers, ~4 KB a note), which the collector a rebuild pauses
            # (Project.rebuild_index) would keep, and fork into the next batch's sub-writers.
            # After the last batch (or a budget's) nothing is forked: they are left to the
            # collector's next run, or to the exit (`ocm rebuild-index` exits without
            # collecting), not collected while this process alone works and a core idles.
            if deadline is None and done < len(rels):
                gc.collect()
            self._manifest.save(ix.latest_generation(), known, broken, None)
            self._keep_embedded(known)
            if deadline is None:
                # The analyzer's memos of the batch's words dropped, and what the batch
                # freed given back to the system, before the next one forks.
                code_analyzer().clean()
                give_back_free_memory()
            if done >= len(rels) or deadline is not None:  # (a budget's batch: all it could)
                break
        if not rels:  # nothing to build (an empty vault, or only edits since a batch)
            self._manifest.save(ix.latest_generation(), known, broken, None)
        if done < len(rels):
            self.progress = (len(known) + len(broken), len(scan))
            self.build_left = True
            return
        self._synced_vectors()  # a build is whole with its embeddings: no search waits
        (self.dir / BUILDING).unlink(missing_ok=True)

    def _keep_embedded(self, known: dict[str, list[int]]) -> None:
        """The rows a batch's writers made (`_embedded`) put into the embeddings and saved
        there, as those of the manifest state just saved: no process holds more than one
        batch's rows (100k notes' rows held to the end, ~1.4 KB a note, then copied into
        the matrix, were much of a build's peak), and a build killed later keeps them."""
        found = self._vector_store() if self._embedded else None
        if found is None:
            return
        model, store = found
        # (a copy: the store keeps the dict it was last brought in line with)
        store.sync(dict(known), self._embed_text, model, self._manifest.token(),
                   self._embedded)
        self._embedded = {}
        store.flush()
        # The rows are in the file: not held in this process between batches (the next
        # batch's sub-writers would be forked with them), read back for the next save.
        self._vectors = None

    def _build(self, ix: windex.Index, scan: dict[str, list[int]], changed: list[str],
               known: dict[str, list[int]], broken: dict[str, list], report: SyncReport,
               progress: Progress | None, until: float | None = None) -> None:
        """Index every note of `changed` into the new, empty index `ix`. From a
        single-threaded process with `build_procs` > 1 (the CLI), the notes are cut into
        that many runs in path order, of about the same size in bytes (a session costs
        more than a memory), and each is read, parsed and indexed by a process of
        its own (this one takes the first, forked sub-writers the others, one segment
        each), and the segments are committed in that order: the same documents, in the
        same order, as one process would index. `until` (a `time.monotonic()` deadline):
        one process reads the notes in order until it passes, and commits those. Without
        `until`, each process also embeds the notes it read (`_embedded`)."""
        from .analysis import code_analyzer
        from .subwriters import SubWriter, bind_forks_to_this_process, give_back_free_memory

        procs = max(1, self.build_procs) if len(changed) >= FORK_MIN_NOTES and (
            until is None) else 1
        if procs > 1 and not (threading.active_count() == 1 and hasattr(os, "fork")
                              and bind_forks_to_this_process()):
            procs = 1  # forked children could outlive this process, or fork is unsafe
        runs = _runs(changed, scan, procs, _builder_share(changed, scan)) if procs > 1 else [
            changed]
        model = self._build_embedder() if until is None else None

        def ready_texts() -> dict[str, EmbedText] | _Embedding:  # (what embedded() takes)
            return {} if model is None else _Embedding(model, self.dir)

        def embedded(ready: dict[str, EmbedText] | _Embedding) -> dict:  # -> rows, or texts
            return ready.rows() if isinstance(ready, _Embedding) else ready

        def part(rels: list[str], tick) -> tuple:  # -> (segment, indexed, broken, embedded)
            # Run in a sub-writer. On an error its writer is left as it is: Whoosh's cancel
            # destroys the temporary folder every writer of the index shares (MAIN.tmp), the
            # files of the parent, still writing its own segment, among them; the parent's
            # cancel removes that folder once the error reaches it.
            writer = _writer(ix, build=True, lock=False)
            ready = ready_texts()
            indexed, failed = self._index_run(
                writer, scan, rels, lambda done: done % TICK_NOTES or tick(), ready)
            code_analyzer().clean()
            return writer.finish_part(), indexed, failed, embedded(ready)

        writer = _writer(ix, build=True)
        subs: list[SubWriter] = []
        try:
            subs = [SubWriter(functools.partial(part, rels)) for rels in runs[1:]]
            mine = len(runs[0])

            def tick(done: int) -> None:
                # (a sub-writer's pipe read as it goes: one that ended with its shorter run
                # has its result taken, so it exits and all it held goes while this
                # process still reads its own run)
                if progress is not None or not done % TICK_NOTES:
                    seen = sum(sub.ticks() for sub in subs)
                    if progress is not None:
                        progress(done + TICK_NOTES * seen, len(changed))

            ready = ready_texts()
            indexed, failed = self._index_run(writer, scan, runs[0], tick, ready, until)
            if until is None:  # (a budget's process keeps its words for its searches)
                code_analyzer().clean()
            made = self._embedded if model is not None else self._embed_ready
            made.update(embedded(ready))
            del ready
            # This process's segment written before it waits for the sub-writers': its
            # postings are not held while they write theirs (each run's end is a peak).
            own = [writer.finish_part()] if indexed and subs else []
            if own:
                give_back_free_memory()
            results = [sub.result() for sub in subs]
            for (_, more, more_failed, more_made), rels in zip(results, runs[1:], strict=True):
                indexed.update(_as_scanned(more, rels, scan))
                failed.update(more_failed)
                made.update(more_made)
            writer.commit_parts(own + [segment for segment, _, _, _ in results])
        except BaseException:
            for sub in subs:
                sub.kill()
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        known.update(indexed)
        broken.update(failed)
        report.added += len(indexed)
        if progress is not None and mine < len(changed):
            progress(len(changed), len(changed))
        if self._searcher is not None:
            self._searcher = self._refreshed(ix)

    def _build_embedder(self) -> Embedder | None:
        """The embedder a build's writers use, its tokenizer loaded before they fork (so
        each does not load it again); None when semantic search is off or cannot load."""
        from .embed import embedder

        model, _ = embedder(self.vault.root)
        if model is not None:
            # (a tokenizer that fails here: Embedder.embed falls back to its own path)
            with contextlib.suppress(Exception):
                model.compiled()
        return model

    def _index_run(self, writer, scan: dict[str, list[int]], rels: list[str],
                   tick: Callable[[int], object], ready: dict[str, EmbedText] | _Embedding,
                   until: float | None = None
                   ) -> tuple[dict[str, list[int]], dict[str, list]]:
        """Read and index the notes `rels` with `writer` (a build's); (the signature of
        each indexed note, [signature, problem] of each broken one). `tick(done)` after
        each note (a sub-writer's `tick()` every TICK_NOTES); each note's text to embed
        goes into `ready`; past `until` (a `time.monotonic()`), the rest are left."""
        indexed: dict[str, list[int]] = {}
        failed: dict[str, list] = {}
        for done, rel in enumerate(rels, 1):
            if until is not None and done > 1 and time.monotonic() >= until:
                break
            seen = scan[rel] if scan[rel] is not UNSEEN else self.vault.note_signature(rel)
            if seen is None:  # gone since it was listed: the next scan drops it
                continue
            # (the scan's own list: 100k notes' copies held to the end of a build, forked
            # into each sub-writer, were ~4 MB)
            sig = seen if type(seen) is list else list(seen)
            fields, problem = self._fields(rel)
            if fields is None:
                failed[rel] = [sig, problem]
            else:
                ready[rel] = _embed_text_of(fields)
                fields.update(path=rel, sig=sig)
                add_row(writer.schema, fields)
                writer.add_document(**fields)
                indexed[rel] = sig
            tick(done)
        return indexed, failed

    def _finder(self, writer):  # -> whoosh.searching.Searcher
        """A searcher over exactly the segments the writer started from, to find the
        documents to delete: the open one when it is current (opening another costs
        10-40 ms at 10k notes), else a new one."""
        if self._searcher is not None and writer.generation - 1 == self._searcher_generation:
            return self._searcher
        return writer.searcher()

    def _refreshed(self, ix: windex.Index):  # -> whoosh.searching.Searcher
        """A searcher over the latest generation that keeps the already open reader of every
        segment that did not change. Not `Searcher.refresh()`: whoosh3 3.54 reuses segment
        readers by segment id alone, so deletions on a kept segment stay visible (and it
        raises TypeError when a reused reader reports no segments). A segment's deletions
        only ever grow, so (segment id, deleted count) identifies what a reader shows."""
        from whoosh.reading import EmptyReader, IndexReader, MultiReader, SegmentReader

        old = self._searcher
        reusable: dict[tuple[str, int], Any] = {}
        if old is not None:
            for reader, _ in old.ixreader.leaf_readers():
                segment = reader.segment() if hasattr(reader, "segment") else None
                if segment is not None and not getattr(reader, "is_closed", False):
                    reusable[(segment.segment_id(), segment.deleted_count())] = reader
        toc = ix._read_toc()  # type: ignore[attr-defined]  # FileIndex's own TOC reader
        self._searcher_generation = toc.generation
        readers, opened = [], []
        try:
            for segment in toc.segments:
                reader = reusable.pop((segment.segment_id(), segment.deleted_count()), None)
                if reader is None:
                    reader = SegmentReader(ix.storage, toc.schema, segment,  # type: ignore[attr-defined]
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
        top: IndexReader
        if not readers:
            top = EmptyReader(toc.schema)
        else:
            # A MultiReader even for one segment: it carries this generation, which a
            # reused SegmentReader would not (and `up_to_date` compares generations).
            top = MultiReader(readers, generation=toc.generation)
        # The old searcher is dropped, not closed: that would close the readers kept above.
        return LiveSearcher(top, fromindex=ix, weighting=weighting(),
                            cache=old.cache if old is not None else None)

    def _fields(self, rel: str) -> tuple[dict | None, str]:
        # Imported here: a search that finds nothing changed never compiles the redactor.
        from ocm.vault.secrets.scrub import read_scrubbed

        path = self.vault.root / rel
        try:
            doc = read_scrubbed(path)
        except OcmError as exc:
            return None, str(getattr(exc, "problem", exc))
        except OSError as exc:
            return None, f"unreadable ({exc.strerror})"
        try:
            kind = self.vault.kind_of(path)
            if kind == "session":
                return session_fields(doc, path.stem), ""
            if kind == "transcript":
                return transcript_fields(doc, path.stem), ""
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
            self._searcher_generation = self._latest_generation(ix)
            self._searcher = LiveSearcher(ix.reader(), fromindex=ix, weighting=weighting())
        elif self._latest_generation(ix) != self._searcher_generation:
            # Not `Searcher.up_to_date()`: over an empty index it compares with the
            # EmptyReader's -1 and reopens on every call.
            self._searcher = self._refreshed(ix)
        return self._searcher

    def _latest_generation(self, ix: windex.Index) -> int:
        """`ix.latest_generation()`, the highest generation among the folder's TOC files'
        names, listed again only when the folder's stat changed: a commit adds its TOC file
        (a name added, removed or renamed changes the folder's mtime), and a warm search
        asked twice (its scorer, its chunks' statistics), each a listing of the folder's
        ~110 files and a pattern match of each name (~0.1 ms). As for a folder's record
        names (ocm/vault/alike/autofix.py), a folder changed within racy.RACY_NS of its
        listing is listed again next time: a second change within one timestamp tick would leave
        its stat as it was."""
        try:
            found = os.stat(self.dir)
        except OSError:
            return ix.latest_generation()
        stamp = (found.st_ino, found.st_mtime_ns, found.st_ctime_ns)
        seen = self._generation_seen
        if seen is not None and seen[0] == stamp:
            return seen[1]
        read_at = time.time_ns()
        generation = ix.latest_generation()
        self._generation_seen = (stamp, generation) if settled(max(stamp[1], stamp[2]),
                                                               read_at) else None
        return generation

    def vectors(self):  # -> ocm.indexer.vectors.VectorStore | None
        """The notes' embeddings, brought up to date with the manifest (what `sync` just
        indexed); None when semantic search is off or its model cannot load."""
        if self.progress is not None or (self.dir / BUILDING).exists():
            return None  # a build under way: its search is one of words until it is whole
        return self._synced_vectors()

    def _vector_store(self) -> tuple[Embedder, VectorStore] | None:
        """(the embedder, the vectors made on first use); None when semantic search is off
        or its model cannot load."""
        from .embed import embedder
        from .vectors import VectorStore

        model, _ = embedder(self.vault.root)
        if model is None:
            return None
        if self._vectors is None:
            self._vectors = VectorStore(self.dir)
        return model, self._vectors

    def _synced_vectors(self):  # -> ocm.indexer.vectors.VectorStore | None
        found = self._vector_store()
        if found is None:
            return None
        model, store = found
        # Rows that match the manifest a listing vouched for need no manifest read.
        listed = self._listed
        if (listed is not None and listed[0] == self._manifest.files_key()
                and store.holds(listed[1])):
            return store
        manifest = self._load_manifest()
        store.sync((manifest or {}).get("notes", {}), self._embed_text, model,
                   self._manifest.token() if manifest is not None else None, self._embedded)
        # What the rows did not need (already embedded).
        self._embed_ready, self._embedded = {}, {}
        return store

    def _embed_text(self, rel: str) -> EmbedText | None:
        """A note's text to embed (`_embed_text_of`), kept from the sync that read it or
        read again."""
        ready = self._embed_ready.pop(rel, None)
        if ready is not None:
            return ready
        fields, _ = self._fields(rel)
        return None if fields is None else _embed_text_of(fields)

    def scorer(self):  # -> ocm.indexer.postings.PostingScorer
        """The term-at-a-time scorer of the current searcher; what it decoded from a
        segment carries over to the next searcher for every segment that one keeps."""
        from .postings import PostingScorer

        searcher = self.searcher()
        old = self._scorer
        if old is None or old.searcher is not searcher:
            if old is not None:
                old.retire()
            self._scorer = PostingScorer(searcher, BM25_K1, BM25_B, searcher.cache)
        return self._scorer

    def _merge_small(self, writer, segments, known: dict[str, list[int]]):  # -> kept
        """Merge policy for incremental commits: fold the small segments that updates
        leave behind into the one being written, once there are enough of them to slow
        searches down. Large segments (a build's) are never rewritten here: that would
        stall a search for seconds (reference §4: 70 s at 10k). Whoosh's default policy is
        the same idea with a Fibonacci bound; this one also caps the count of large ones.

        Small segments are folded in by indexing their notes again from the files, ~6x
        faster than Whoosh's `add_reader`, which re-reads every term's postings (~35 ms a
        note). A note that changed since the scan gets its new text under its old
        signature, so the next check indexes it once more; one that vanished is dropped
        here and from the manifest by the next check."""
        from whoosh.reading import SegmentReader

        small = [s for s in segments if s.doc_count_all() <= SMALL_SEGMENT_DOCS]
        large = sorted((s for s in segments if s.doc_count_all() > SMALL_SEGMENT_DOCS),
                       key=lambda s: s.doc_count_all())
        merge = small if len(small) >= MAX_SMALL_SEGMENTS else []
        for segment in merge:
            reader = SegmentReader(writer.storage, writer.schema, segment)
            try:
                paths = [stored["path"] for stored in reader.all_stored_fields()]
            finally:
                reader.close()
            for rel in paths:
                fields, _ = self._fields(rel)
                if fields is not None and rel in known:
                    fields.update(path=rel, sig=known[rel])
                    add_row(writer.schema, fields)
                    writer.add_document(**fields)
        if len(large) > MAX_LARGE_SEGMENTS:  # once in a long while: the smaller half of them
            for segment in large[: len(large) // 2]:
                reader = SegmentReader(writer.storage, writer.schema, segment)
                writer.add_reader(reader)
                reader.close()
                merge.append(segment)
        return [s for s in segments if s not in merge]


class _CheckedStorage(FileStorage):
    """Whoosh's storage of an index folder whose files `Checksums.check` left to be checked
    a block at a time are opened through that check (`checksums.opened`)."""

    def open_file(self, name: str, **kwargs: Any) -> StructFile:
        return StructFile(checksums.opened(os.path.join(self.folder, name)),  # type: ignore[arg-type]
                          name=name, **kwargs)


def _lock_timeout() -> type[Exception]:
    """filelock's Timeout, imported once a lock is taken: filelock's imports (logging,
    platform; ~30 ms) are not on the path of a search whose index is up to date."""
    from filelock import Timeout

    return Timeout


class _Embedding:
    """The texts to embed of the notes a build's writer reads, embedded every BATCH notes
    as they come (the chunks vectors.py embeds a run's texts in; a text's row does not
    depend on the texts embedded with it), so that a writer holds its notes' rows, not
    their texts until the end of its run (~4.5 KB a note)."""

    def __init__(self, model: Embedder, folder: Path) -> None:
        from .vectors import BATCH

        self._model, self._folder, self._batch = model, folder, BATCH
        self._texts: dict[str, EmbedText] = {}
        self._rows: dict[str, Embedded] = {}

    def __setitem__(self, rel: str, text: EmbedText) -> None:
        self._texts[rel] = text
        if len(self._texts) >= self._batch:
            self._embed()

    def _embed(self) -> None:
        from .vectors import embed_notes

        if self._texts:
            self._rows.update(embed_notes(list(self._texts.items()), self._model,
                                          self._folder))
            self._texts = {}

    def rows(self) -> dict[str, Embedded]:
        """Every note's rows (`embed_notes`), the last texts embedded now."""
        self._embed()
        return self._rows


def _unchanged(scan: dict[str, list[int]], known: dict[str, list[int]],
               broken: dict[str, list]) -> bool:
    """The no-op check: True when every note has the signature the manifest recorded."""
    if len(scan) != len(known) + len(broken):
        return False
    if not broken:
        return scan == known  # one C-level comparison (~1 ms at 10k, ~8 ms key by key)
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


def _diff(scan: dict[str, list[int]], known: dict[str, list[int]],
          broken: dict[str, list], only: set[str] | None = None
          ) -> tuple[list[str], list[str]]:
    """(changed or new, deleted) notes of `scan` against the manifest's `known` and
    `broken`; `only`: the notes that can differ, when known (else every note)."""
    if not known and not broken and only is None:  # a new index: every note
        return sorted(scan), []
    changed = []
    get = known.get
    items = scan.items() if only is None else [(rel, scan[rel]) for rel in only if rel in scan]
    for rel, (mtime, size) in items:
        sig = get(rel)
        if sig is not None and sig[0] == mtime and sig[1] == size:
            continue
        if rel in broken and broken[rel][0] == [mtime, size]:
            continue
        changed.append(rel)
    gone = list(known) + list(broken) if only is None else [
        rel for rel in only if rel in known or rel in broken]
    deleted = [rel for rel in gone if rel not in scan]
    return sorted(changed), sorted(set(deleted))


def _newest_first(rels: list[str], scan: dict[str, list[int]]) -> list[str]:
    """`rels` (in path order) by modification time, newest first; of the same time, the
    last path first (a stable sort of the reversed paths)."""
    return sorted(reversed(rels), key=lambda rel: scan[rel][0], reverse=True)


def _batch_ends(rels: list[str], scan: dict[str, list[int]], procs: int) -> list[int]:
    """Where each batch of a build of `rels` (in their order) by `procs` processes ends:
    batches of about the same work (a note's size plus NOTE_BYTES), BUILD_BATCHES of them
    or fewer where batches of BUILD_BATCH_MIN notes make fewer, more where a batch's work
    would pass BUILD_BATCH_WORK (whatever its notes), at most as many as keep the build's
    segments within MAX_LARGE_SEGMENTS (cut as `_runs` cuts)."""
    total = _work(rels, scan)
    most = max(BUILD_BATCHES, MAX_LARGE_SEGMENTS // max(1, procs))
    count = max(1, min(max(-(-total // BUILD_BATCH_WORK),
                           min(BUILD_BATCHES, len(rels) // BUILD_BATCH_MIN)), most))
    return list(itertools.accumulate(len(run) for run in _runs(rels, scan, count)))


def _work(rels: list[str], scan: dict[str, list[int]]) -> int:
    """The work of indexing the notes `rels`: their sizes plus NOTE_BYTES a note."""
    return sum(scan[rel][1] for rel in rels) + NOTE_BYTES * len(rels)


def _builder_share(rels: list[str], scan: dict[str, list[int]]) -> float:
    """The builder's share of a batch of `rels` (`_runs`' `first`): BUILDER_SHARE where
    the batch's work passes BUILD_BATCH_WORK (what a process holds at its run's end then
    matters), else the same work as each sub-writer's."""
    return BUILDER_SHARE if _work(rels, scan) > BUILD_BATCH_WORK else 1


def _runs(rels: list[str], scan: dict[str, list[int]], count: int,
          first: float = 1) -> list[list[str]]:
    """`rels` cut into `count` runs (at least one, none empty but the only one) in their
    order, of about the same work each (a note's size plus NOTE_BYTES), but the first:
    `first` times the work of the others, in their units of work (1: the same)."""
    total = _work(rels, scan)
    units = count - 1 + first
    runs: list[list[str]] = [[]]
    weight = 0
    for rel in rels:
        work = scan[rel][1] + NOTE_BYTES
        if weight + work / 2 > total * (len(runs) - 1 + first) / units and runs[-1]:
            runs.append([])
        runs[-1].append(rel)
        weight += work
    return runs


def _as_scanned(indexed: dict[str, list[int]], rels: list[str],
                scan: dict[str, list[int]]) -> dict[str, list[int]]:
    """A sub-writer's `indexed` (unpickled: a new path string, list and ints a note, ~250
    bytes, 25 MB for 100k notes held by the builder to the end of the build and forked
    into each later sub-writer) as the builder's own objects: the path of its run
    `rels`, the scan's signature where it is the same; in the same order."""
    shared = {}
    for rel in rels:
        sig = indexed.get(rel)
        if sig is not None:
            seen = scan[rel]
            shared[rel] = seen if type(seen) is list and seen == sig else sig
    return shared


def _embed_text_of(fields: dict) -> EmbedText:
    """A note's text to embed, and for a transcript each turn's (its stored chunks): a
    question is about one turn of a conversation, not about all of it."""
    text = "\n".join(str(fields[name]) for name in EMBEDDED_FIELDS if fields.get(name))
    chunks = fields.get("chunks") or []
    parts = [chunk[5] for chunk in chunks] if (
        fields.get("kind") == "transcript" and len(chunks) > 1) else []
    return text, parts


def _writer(ix: windex.Index, build: bool = False, lock: bool = True):
    """A writer, waiting for another process's. `build`: a full rebuild's, into a new
    segment of the empty index (ocm/indexer/buildwriter.py); `lock=False` for a sub-writer
    of a build whose parent holds the lock."""
    # Imported here: only writes need them.
    from .buildcodec import BuildCodec

    deadline = time.monotonic() + WRITER_TIMEOUT_S
    # One file per part of a segment instead of Whoosh's compound file: opening a compound
    # segment copies each part out of its memory map (~45 ms at 10k notes, paid by every
    # `ocm search`); separate files are read in place.
    # BuildCodec: the same files as Whoosh's default codec with less work per posting
    # (rebuilds 2x faster; a 10-note commit at 10k notes ~84 ms of CPU instead of ~105).
    kwargs: dict = {"compound": False, "codec": BuildCodec()}
    if build:
        from .buildwriter import BuildWriter

        if not lock:
            return _one_analyzer(BuildWriter(ix, _lk=False, **kwargs))
    while True:
        try:
            if build:
                return _one_analyzer(BuildWriter(ix, timeout=2.0, delay=0.05, **kwargs))
            return ix.writer(timeout=2.0, delay=0.05, **kwargs)
        except LockError:
            if time.monotonic() > deadline:
                raise OcmError(f"search index at {ix.storage.folder} stayed locked for "  # type: ignore[attr-defined]
                               f"{WRITER_TIMEOUT_S:.0f}s; try again") from None


def _one_analyzer(writer: BuildWriter) -> BuildWriter:
    """A build's writer analysing with `code_analyzer()`, the instance the sections' token
    counts use (ocm/indexer/chunks.py), so that each token of a run is memoised once, and
    dropped with it. The writer of an opened index (a build resumed) unpickles the schema
    and with it an analyzer of its own (the same configuration: module constants), whose
    memos held each token of the run a second time (~40 MB a process at 100k)."""
    from .analysis import CodeAnalyzer, code_analyzer

    shared = code_analyzer()
    for _, fieldtype in writer.schema.items():
        if isinstance(getattr(fieldtype, "analyzer", None), CodeAnalyzer):
            fieldtype.analyzer = shared
    return writer
