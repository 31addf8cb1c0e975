"""Auto-supersede (seed 000): when a memory is stored, an older active
record of the same type and scope that says nearly the same thing is marked superseded.

Similarity is lexical: cosine over light-stemmed content tokens of title + text (code
identifiers and paths split into parts, stopwords dropped), plus a bonus when both records
name the same file. Thresholds are stricter when no file is shared and were tuned on the
labelled pairs in `bench/data/coding/supersede_pairs.jsonl` (`python bench/supersede.py`)
for precision first: a wrong supersede hides a true fact; a missed one only leaves a
duplicate.

Meaning, when the caller passes it (`meaning(old_text, new_text)`: the cosine of the two
records' embeddings, the search vectors' model; see ocm/indexer/likeness.py), adds one
more way to agree for records that share a file: the mean of the lexical score and the
meaning reaching THRESHOLD_WITH_MEANING catches rewrites that keep the subject but change
the words. This module never embeds anything itself.

A plan reported done (ocm/vault/alike/plandone.py) is a last way for records that share a file:
the older says a change should be made to something, the newer reports it made ("should be
split" -> "was refactored into domain modules"), which words and meaning both miss.

Never across scopes, never within one session, never for `session_summary` records or
records with a `key` (keys have their own explicit supersede).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lookalikes import Lookalikes

from . import plandone
from .words import cosine, record_counts

# Tuned by bench/supersede.py (see bench/README.md for the precision/recall it measured).
THRESHOLD_SHARED_FILE = 0.77
THRESHOLD_NO_SHARED_FILE = 0.85
# Records sharing a file: (lexical + meaning) / 2 at least this (bench/supersede.py --tune).
THRESHOLD_WITH_MEANING = 0.72
EXCLUDED_TYPES = frozenset({"session_summary"})
MAX_CANDIDATES = 5

def _norm_file(path: str) -> str:
    return str(path).strip().removeprefix("./").strip("/").lower()


def common_files(a: Iterable[str], b: Iterable[str]) -> set[str]:
    left = {_norm_file(f) for f in a if str(f).strip()}
    right = {_norm_file(f) for f in b if str(f).strip()}
    return left & right


def shared_files(a: Iterable[str], b: Iterable[str]) -> bool:
    return bool(common_files(a, b))


def similarity(title_a: str, text_a: str, title_b: str, text_b: str) -> float:
    """Cosine over title + text tokens (the title counted twice: it names the subject)."""
    return cosine(record_counts(title_a, text_a), record_counts(title_b, text_b))


Meaning = plandone.Meaning  # the cosine of two texts' embeddings (old record, new record)


def record_text(title: str, text: str) -> str:
    """What meaning compares: the title, then the text."""
    return f"{title}\n{text}"


@dataclass
class Decision:
    score: float
    shared_file: bool
    threshold: float
    meaning: float | None = None
    with_meaning: float = THRESHOLD_WITH_MEANING
    done: str = ""  # how the newer record reports done what the older planned

    @property
    def alike(self) -> bool:
        """Words, or words and meaning together, say the two records agree."""
        if self.score >= self.threshold:
            return True
        return (self.meaning is not None and self.shared_file
                and (self.score + self.meaning) / 2 >= self.with_meaning)

    @property
    def supersede(self) -> bool:
        return self.alike or bool(self.done)


# Auto-supersede is for fact-sized records. Between long texts (transcripts, patches, pasted
# docs) word overlap is high for anything on one topic, so similarity says little.
MAX_FACT_CHARS = 1500


def judge(old_title: str, old_text: str, old_files: Iterable[str], new_title: str,
          new_text: str, new_files: Iterable[str],
          thresholds: tuple[float, float] | None = None, meaning: Meaning | None = None,
          with_meaning: float = THRESHOLD_WITH_MEANING,
          action_threshold: float = plandone.THRESHOLD_ACTION) -> Decision:
    """Words decide alone; meaning is asked only for records that share a file, whose words
    fall short but could still reach `with_meaning` together with it. Records sharing a
    file that neither call alike are still superseded when the newer reports done what the
    older planned (`plandone.answered`; meaning compares the two actions across verb
    families at `action_threshold`)."""
    shared_threshold, strict_threshold = thresholds or (THRESHOLD_SHARED_FILE,
                                                        THRESHOLD_NO_SHARED_FILE)
    common = common_files(old_files, new_files)
    shared = bool(common)
    threshold = shared_threshold if shared else strict_threshold
    if max(len(old_text), len(new_text)) > MAX_FACT_CHARS:
        return Decision(0.0, shared, threshold)
    score = similarity(old_title, old_text, new_title, new_text)
    cosine_ = None
    if meaning is not None and shared and 2 * with_meaning - 1 <= score < threshold:
        cosine_ = meaning(record_text(old_title, old_text), record_text(new_title, new_text))
    decision = Decision(score, shared, threshold, cosine_, with_meaning)
    if shared and not decision.alike:
        decision.done = plandone.answered(record_text(old_title, old_text),
                                          record_text(new_title, new_text), common, meaning,
                                          action_threshold)
    return decision


def eligible(new: dict, old: dict) -> bool:
    """The rules before any similarity: same type and scope, both active, no keys, not a
    session summary, not from the same session, not the same record."""
    from ..links import unlink

    if new.get("id") == old.get("id") or (old.get("status") or "active") != "active":
        return False
    if new.get("type") in EXCLUDED_TYPES or old.get("type") != new.get("type"):
        return False
    if (old.get("scope") or "project") != (new.get("scope") or "project"):
        return False
    if old.get("key") or new.get("key"):
        return False
    session_new, session_old = unlink(new.get("session")), unlink(old.get("session"))
    return not (session_new and session_new == session_old)


@dataclass
class Match:
    old_id: str
    old_path: Path
    old_title: str
    score: float
    shared_file: bool
    meaning: float | None = None
    done: str = ""

    @classmethod
    def of(cls, note_id: str, path: Path, title: str, decision: Decision) -> Match:
        return cls(note_id, path, title, decision.score, decision.shared_file,
                   decision.meaning, decision.done)

    @property
    def why(self) -> str:
        shared = "same file" if self.shared_file else "no shared file"
        meant = f", meaning {self.meaning:.2f}" if self.meaning is not None else ""
        done = f", plan reported done: {self.done}" if self.done else ""
        return f"similarity {self.score:.2f}{meant}, {shared}{done}"

    def reason(self, new_id: str) -> str:
        return f"auto-superseded by {new_id} ({self.why})"


def best_match(new: dict, content: str, looks: Lookalikes, meaning: Meaning | None = None
               ) -> Match | None:
    """The active record of `new`'s type that `new` should supersede, if any, among `looks`
    (the index's closest records, else the type's folder). `meaning` as in `judge`."""
    if new.get("type") in EXCLUDED_TYPES or new.get("key") or len(content) > MAX_FACT_CHARS:
        return None
    best: Match | None = None
    names = done_file_names(new, content)
    for path, note in looks.notes(lowest_score(meaning is not None), names=names):
        fm = note.fm
        old = {"id": note.id, "type": note.type, "status": note.status, "scope": note.scope,
               "key": note.key, "session": fm.get("session")}
        if not eligible(new, old):
            continue
        decision = judge(note.title, note.content, note.str_list("files"),
                         str(new.get("title") or ""), content, new.get("files") or [],
                         meaning=meaning)
        if decision.supersede and (best is None or decision.score > best.score):
            best = Match.of(note.id, path, note.title, decision)
    return best


def lowest_score(with_meaning: bool) -> float:
    """The lexical score below which no rule can supersede (meaning is at most 1)."""
    lowest = THRESHOLD_SHARED_FILE
    return min(lowest, 2 * THRESHOLD_WITH_MEANING - 1) if with_meaning else lowest


def done_file_names(new: dict, content: str) -> tuple[str, ...]:
    """The names of the new record's files when it reports a change done (a plan of an
    older record naming one of them may be answered, however few words they share)."""
    files = [str(f) for f in new.get("files") or [] if str(f).strip()]
    if not files or not plandone.reports_done(record_text(str(new.get("title") or ""),
                                                          content)):
        return ()
    return tuple(_norm_file(f).rsplit("/", 1)[-1] for f in files)


def plan_vault(vault, meaning: Meaning | None = None) -> list[tuple[dict, Match]]:
    """What auto-supersede would do to the records already in a vault: each active record
    checked against the older active records of its type, oldest first (`ocm supersede`)."""
    from ..memories import MemoryNote

    by_type: dict[str, list[tuple[Path, MemoryNote]]] = {}
    for path, note in vault.memory_notes():
        if note.status == "active":
            by_type.setdefault(note.type, []).append((path, note))
    out: list[tuple[dict, Match]] = []
    retired: set[str] = set()
    for notes in by_type.values():
        # oldest first (by the true instant); records made within one second are ordered by
        # their file's mtime
        notes.sort(key=lambda item: (item[1].created_at or _EPOCH, _mtime(item[0])))
        for index, (path, new) in enumerate(notes):
            if new.id in retired:
                continue
            info = {"id": new.id, "type": new.type, "scope": new.scope, "key": new.key,
                    "session": new.fm.get("session"), "title": new.title,
                    "files": new.str_list("files"), "path": path}
            if info["type"] in EXCLUDED_TYPES or info["key"]:
                continue
            best: Match | None = None
            for old_path, old in notes[:index]:
                if old.id in retired:
                    continue
                old_info = {"id": old.id, "type": old.type, "status": old.status,
                            "scope": old.scope, "key": old.key, "session": old.fm.get("session")}
                if not eligible(info, old_info):
                    continue
                decision = judge(old.title, old.content, old.str_list("files"), new.title,
                                 new.content, new.str_list("files"), meaning=meaning)
                if decision.supersede and (best is None or decision.score > best.score):
                    best = Match.of(old.id, old_path, old.title, decision)
            if best is not None:
                retired.add(best.old_id)
                out.append((info, best))
    return out


_EPOCH = __import__("datetime").datetime(1970, 1, 1, tzinfo=__import__("datetime").UTC)


def _mtime(path: object) -> int:
    try:
        return Path(str(path)).stat().st_mtime_ns
    except OSError:
        return 0
