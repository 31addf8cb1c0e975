"""Searching the vaults a scope names, each index checked first: the room behind
`Project.search`.

`plan` turns a request (free text that may name filters, explicit filters, limit) into what
is searched; `VaultSearch.run` searches every vault's index for it and ranks the merged hits.
A one-shot search whose notes are still being listed ahead (ocm/cli/searching.py) searches
the index as it stands meanwhile and keeps what it found when the listing says nothing
changed; else the index is brought up to date and searched again, so the hits are always a
search after the check. A damaged index is rebuilt, not fatal; the vaults of the global
scope are merged on one scale; hits on project memories whose files changed in git are
marked stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ocm.indexer.checksums import ChecksumError
from ocm.indexer.hits import Filters
from ocm.vault.errors import OcmError

if TYPE_CHECKING:
    from ocm.indexer.index import NoteIndex
    from ocm.indexer.search import Hit
    from ocm.vault.store import Vault


@dataclass
class Plan:
    """What a search looks for once its query is parsed."""

    query: str  # as asked (its words set the intent priors)
    text: str  # the words searched ("" for a listing)
    paths: tuple[str, ...]
    filters: Filters
    ranked: bool
    # Dates written in the query beside content: they rank instead of filtering.
    soft_window: tuple[Any, Any] | None
    when: datetime
    limit: int
    group: bool
    explain: bool
    merged_scales: bool  # the global scope: each vault's scores on one scale
    parsed: Any  # ocm.indexer.query's parse of the query

    @property
    def applied(self) -> dict[str, Any]:
        """The filters applied ({name: value}) and those the query's words set."""
        return _described(self.filters, self.parsed, self.soft_window)


def plan(req: Any, when: datetime, tool: str | None, types: tuple[str, ...]) -> Plan:
    """The plan of a validated request (`Project.SearchRequest`): `tool` is its known
    tool, `types` its canonical memory types."""
    from ocm.indexer import search as engine
    from ocm.indexer.query import parse_query

    parsed = parse_query(req.query or "", when)
    text = parsed.text
    listing, implied_kind = engine.meta_only(text)
    if listing:
        text = ""
    ranked = bool(text.strip() or parsed.paths)
    # Dates written in the query filter only when they are all there is to it;
    # alongside content they rank (engine.rank's `window`).
    soft_window = (parsed.since, parsed.until) if ranked and (
        parsed.since or parsed.until) else None
    filters = Filters(
        kind=req.kind or (implied_kind if not types else None), types=types,
        status=req.status, tool=tool or parsed.tool,
        since=req.since or (None if soft_window else parsed.since),
        until=req.until or (None if soft_window else parsed.until), file=req.file,
        tag=req.tag, include_resolved=req.include_resolved,
        author=req.author)
    return Plan(query=req.query or "", text=text, paths=parsed.paths, filters=filters,
                ranked=ranked, soft_window=soft_window, when=when, limit=req.limit,
                group=req.group, explain=req.explain, merged_scales=req.scope == "global",
                parsed=parsed)


def _described(filters: Filters, parsed: Any,
               soft_window: tuple[Any, Any] | None) -> dict[str, Any]:
    """The filters a search applied ({name: value}) and those its query's words set."""
    from ocm.vault.clock import format_timestamp

    def shown(value: Any) -> Any:
        return format_timestamp(value) if isinstance(value, datetime) else (
            ",".join(value) if isinstance(value, tuple) else value)

    applied = {name: shown(value) for name, value in filters.__dict__.items()
               if value not in (None, (), False, "")}
    from_query = {name: shown(value) for name, value in (
        ("tool", parsed.tool), ("since", None if soft_window else parsed.since),
        ("until", None if soft_window else parsed.until), ("paths", parsed.paths))
        if value not in (None, ())}
    if soft_window:
        from_query["near_dates"] = " to ".join(shown(v) for v in soft_window if v)
    return {"filters": applied, "from_query": from_query}


def on_one_scale(per_vault: list[list[Hit]]) -> list[Hit]:
    """Merge vaults whose BM25 scales differ: each vault's scores are divided by its own best,
    then multiplied by the overall best so thresholds keep their meaning."""
    bests = [max((h.score for h in hits), default=0.0) for hits in per_vault]
    top = max(bests, default=0.0)
    merged: list[Hit] = []
    for hits, best in zip(per_vault, bests, strict=True):
        if best > 0:
            for hit in hits:
                hit.score = hit.score / best * top
        merged.extend(hits)
    return merged


def one_copy(hits: list[Hit]) -> list[Hit]:
    """One vault's hits without the extra copies of a duplicated note file."""
    from ocm.vault.duplicates import one_per_id

    return one_per_id(hits, lambda hit: ("", hit.id, hit.path))


def mark_stale(hits: list[Hit], vaults: list[Vault]) -> None:
    """Flag active project memories whose files changed in git since they were written
    (`meta['changed_files']`); derived here at read time, never written to the note."""
    from ocm.vault.git.staleness import mark_stale as mark

    # Only memories are ever marked: the others' paths are not compared (pathlib's
    # `is_relative_to` makes two paths a hit).
    memories = [hit for hit in hits if hit.kind == "memory"]
    for vault in vaults:
        if vault.scope == "project" and memories:
            base = vault.root.resolve()
            mark([h for h in memories if h.path.is_relative_to(base)], vault.project_root)


class VaultSearch:
    """One search of `vaults`. `index_for(vault)` is the vault's open index, `refresh(vault)`
    the same brought up to date (the facade's: it also applies hook records and repairs a
    merge); `home` is the project's vault (its hook records, its embedder's failure);
    notices for people are appended to `notices`. An index with no usable build of at
    least `build_budget[1]` notes spends `build_budget[0]` seconds at most building before it
    answers from the notes it has (`NoteIndex.build_budget`); `indexing` then says how far
    the builds got."""

    def __init__(self, vaults: list[Vault], home: Vault,
                 index_for: Callable[[Vault], NoteIndex],
                 refresh: Callable[[Vault], NoteIndex], notices: list[str],
                 build_budget: tuple[float, int] | None = None) -> None:
        self.vaults = vaults
        self.home = home
        self._index_for = index_for
        # Each vault's index, looked up once a search (`index_for` resolves the vault's
        # root, ~30 us, and a search asked for each index three times).
        self._indexes: dict[int, NoteIndex] = {}
        self.refresh = refresh
        self.notices = notices
        self.build_budget = build_budget
        self.indexing: dict[str, int] | None = None
        # The vaults whose build this search left for another process to finish.
        self.unbuilt: list[Vault] = []

    def index_for(self, vault: Vault) -> NoteIndex:
        """The vault's index (`index_for`'s), the same object all through this search."""
        found = self._indexes.get(id(vault))
        if found is None:
            found = self._indexes[id(vault)] = self._index_for(vault)
        return found

    def run(self, plan: Plan) -> list[Hit]:
        indexes = [self.index_for(vault) for vault in self.vaults]
        for index in indexes:
            if self.build_budget is not None:
                index.build_budget, index.budget_min_notes = self.build_budget
        try:
            try:
                hits = self._run(plan)
            except ChecksumError:
                # Found reading what a hit returns (after `searched` has its candidates):
                # each index checked again (which names the file and rebuilds), then the
                # search again.
                for index in indexes:
                    index.close()
                    self.refresh(index.vault)
                hits = self._run(plan)
        finally:
            for index in indexes:
                index.build_budget = None
        partial = [index.progress for index in indexes if index.progress is not None]
        if partial:
            self.indexing = {"indexed": sum(done for done, _ in partial),
                             "total": sum(total for _, total in partial)}
        self.unbuilt = [index.vault for index in indexes if index.build_left]
        return hits

    def _run(self, plan: Plan) -> list[Hit]:
        from ocm.vault.freshness import journal

        presumed = [] if journal.pending(self.home.root) else [
            index for vault in self.vaults if (index := self.index_for(vault)).presume()]
        if presumed:
            notices = len(self.notices)
            try:
                first: list[Hit] | None = self.searched(plan, presumed)
            except Exception:  # noqa: BLE001 - the search after the check raises it again
                first = None
            confirmed = [index.confirm() for index in presumed]
            if first is not None and all(confirmed):
                return first
            del self.notices[notices:]
            for index, same in zip(presumed, confirmed, strict=True):
                if not same:
                    self.refresh(index.vault)  # takes the listing `confirm` kept
        return self.searched(plan, presumed)

    def searched(self, plan: Plan, fresh: list[NoteIndex]) -> list[Hit]:
        """The search, each vault's index checked first unless it is in `fresh`."""
        from ocm.indexer import search as engine

        text, ranked = plan.text, plan.ranked
        per_vault: list[list[Hit]] = []
        indexes: list[NoteIndex] = []
        for vault in self.vaults:
            index = self.index_for(vault)
            if index not in fresh:
                index = self.refresh(vault)
            indexes.append(index)
            try:
                found = engine.candidates(index, text, plan.paths, plan.filters,
                                          explain=plan.explain)
            except OcmError:
                raise
            except ChecksumError:
                # A block read for the first time failed its checksum (ocm/indexer/
                # checksums.py): the index's check now names the file and rebuilds (or,
                # for saved postings, removes it), as when a check finds it before a search.
                index.close()
                index = self.refresh(vault)
                indexes[-1] = index
                found = engine.candidates(index, text, plan.paths, plan.filters,
                                          explain=plan.explain)
            except Exception as exc:  # noqa: BLE001 - a damaged index is rebuilt, not fatal
                notice = f"ocm: search index was damaged ({type(exc).__name__}); rebuilt it"
                self.notices.append(notice)
                index.close()
                index.sync(force_rebuild=True)
                found = engine.candidates(index, text, plan.paths, plan.filters,
                                          explain=plan.explain)
            per_vault.append(one_copy(found))
        if plan.merged_scales and ranked:
            hits = on_one_scale(per_vault)
        else:
            hits = [hit for found in per_vault for hit in found]
        if not ranked:
            hits.sort(key=lambda h: h.date or datetime.min, reverse=True)
        if ranked:
            from ocm.indexer.embed import failure_notice

            failed = failure_notice(self.home.root)
            if failed:
                self.notices.append(failed)
        listed = plan.limit if plan.group or not ranked else max(plan.limit, engine.CANDIDATES)
        ranked_hits = engine.rank(hits, plan.when, listed, ranked=ranked,
                                  priors=engine.intent_priors(plan.query),
                                  window=plan.soft_window)
        mark_stale(ranked_hits, self.vaults)
        if not ranked:
            return ranked_hits
        if not plan.group:
            return engine.chunk_hits(ranked_hits, text, indexes, plan.limit)
        return engine.grouped_hits(ranked_hits, text, indexes, plan.limit)
