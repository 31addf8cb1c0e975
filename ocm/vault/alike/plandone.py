"""A plan reported done (seed 000's own example of auto-supersede, issue #11).

"constants.ts is 800 lines and should be split" and, later, "constants.ts was refactored
into domain modules" share their file and little else: words score 0.40, meaning 0.27, below
look-alikes that must stay active. What ties them is their form: the older record states
something to do about a thing (should / must / needs to / TODO + a change verb, or a size
problem: "is N lines", "too long"), the newer one reports that change done to the same
thing (was / were / has been + a change verb). That is this rule:

* the records share a file (checked by the caller, ocm/vault/alike/supersede.py `judge`);
* a plan clause of the older record and a done clause of the newer one name the same
  thing: their subject words overlap (a path counts by its file name, "src/lib/constants.ts"
  is "constants"); a clause whose subject is only a pronoun ("it should be split") stands
  for what its record said before it, and the record's files;
* the done change answers the planned one: the same verb family (split, refactored,
  extracted, broken up are one family; removed, deleted, dropped another) and, when both
  name what the change makes (the words after the verb, a reason such as "now that ..."
  left out), a word in common; or, across families, the two actions (verb and what
  follows it) close in meaning: cosine of their embeddings at least `THRESHOLD_ACTION`,
  tuned on the tune split of
  bench/data/coding/supersede_pairs.jsonl (`python bench/supersede.py --tune`);
* the newer record does not still plan the same change, and the done clause is not
  negated, partial or conditional ("was not split", "was partly split", "if it was split").

Change verbs are a closed list: "was called twice" or "must use Decimal" is no plan and no
change. This module never embeds anything itself: meaning comes in as a function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from .words import tokens

# Cross-family actions: cosine of "verb + object" at least this (bench/supersede.py --tune).
THRESHOLD_ACTION = 0.63
ACTION_WORDS = 8  # what follows the verb, at most, in the action compared by meaning

# Change verbs by family: base form, then the forms that report it done.
_FAMILIES: dict[str, str] = {
    "restructure": """split split | refactor refactored | extract extracted | break broken
        broke | modularize modularized | modularise modularised | reorganize reorganized |
        reorganise reorganised | restructure restructured | decompose decomposed | rewrite
        rewritten rewrote | rework reworked | shorten shortened | simplify simplified |
        separate separated | divide divided | trim trimmed""",
    "move": "move moved | relocate relocated",
    "rename": "rename renamed",
    "remove": """remove removed | delete deleted | drop dropped | retire retired | eliminate
        eliminated | deprecate deprecated""",
    "replace": """replace replaced | migrate migrated | switch switched | port ported |
        convert converted | swap swapped""",
    "upgrade": "upgrade upgraded | bump bumped | update updated",
    "fix": "fix fixed | resolve resolved | patch patched | repair repaired",
    "add": "add added | introduce introduced | implement implemented | enable enabled",
    "merge": """merge merged | consolidate consolidated | combine combined | inline inlined |
        deduplicate deduplicated""",
}
_BASE: dict[str, str] = {}  # any form -> family
_DONE: dict[str, str] = {}  # done form -> family
for _family, _groups in _FAMILIES.items():
    for _group in _groups.split("|"):
        _base, *_forms = _group.split()
        _BASE[_base] = _family
        for _form in _forms:
            _BASE[_form] = _DONE[_form] = _family


def _alternation(words: Iterable[str]) -> str:
    return "|".join(sorted(set(words), key=len, reverse=True))


# An adverb may sit between the auxiliary and the verb ("was fully split"), not a hedge.
_ADVERB = r"(?:(?!(?:partially|partly|only|barely|hardly)\b)[a-z]+ly\s+)?"
_MODAL = (r"should|must|needs?\s+to|has\s+to|have\s+to|ought\s+to|is\s+to|are\s+to|"
          r"(?:plans?|planned|wants?)\s+to|to-?do\b:?")
_PLAN_RE = re.compile(
    rf"\b(?P<aux>{_MODAL})\s+(?:(?P<be>be|get)\s+)?(?:(?:finally|eventually)\s+)?{_ADVERB}"
    rf"(?P<verb>{_alternation(_BASE)})\b(?P<rest>(?:[^.;:!?\n]|[.:](?=\S))*)", re.I)
_PROBLEM_RE = re.compile(
    r"\b(?P<aux>is|are)\s+(?:now\s+|still\s+)?(?:over\s+|about\s+|almost\s+)?"
    r"(?P<verb>\d[\d,]*\s+lines|too\s+(?:long|big|large)|huge|bloated)\b(?P<rest>)"
    r"(?P<be>)", re.I)
_SINCE = r"(?:now|since|already|finally|just|recently)\s+"
_DONE_RE = re.compile(
    rf"\b(?P<aux>was|were|(?:has|have|had)\s+(?:{_SINCE})?been|is\s+now|are\s+now|got|"
    rf"has|have)\s+(?:{_SINCE})*{_ADVERB}"
    rf"(?P<verb>{_alternation(_DONE)})\b(?P<rest>(?:[^.;:!?\n]|[.:](?=\S))*)", re.I)
_PASSIVE_DONE = re.compile(rf"^(?:was|were|(?:has|have|had)\s+(?:{_SINCE})?been|is\s+now|"
                           r"are\s+now|got)$", re.I)
_CLAUSE_START = re.compile(r"[.;:!?](?=\s|$)|\n")  # not the dot of "constants.ts"
_CONDITION = re.compile(r"\b(?:if|unless|until|whether|once|when|before|after)\b", re.I)
_PREPOSITION = re.compile(r"\b(?:up|out|into|in|to|from|with|by|on|for|as|so|because|once|"
                          r"before|after|under|and|but)\b", re.I)
_REASON = re.compile(r"\b(?:now\s+that|because|so|since|once|before|after|until|when|while|"
                     r"unless|if|as\s+soon\s+as)\b", re.I)
_PATH_RE = re.compile(r"[\w@~/.-]*[\w-]\.[A-Za-z][\w]*|[\w@~.-]+/[\w@~./-]*")
# Beyond auto-supersede's stopwords, subject words that name nothing by themselves: a
# clause about "it" or "the file" is about what its record is about.
_VAGUE_TEXT = """us he she someone everything something file files code module modules line lines
    still onto under over up out because here instead whose"""


def _path_stem(match: re.Match[str]) -> str:
    """A path stands for its file's name: "src/lib/constants.ts" -> "constants"."""
    name = match.group(0).rstrip("/").rsplit("/", 1)[-1]
    return " " + (name.split(".", 1)[0] or name) + " "


def subject_words(text: str) -> frozenset[str]:
    """The words that name what a clause is about (paths by their file name), as
    auto-supersede counts words (stemmed, stopwords dropped), numbers and vague words left
    out."""

    vague = _vague(tokens)
    return frozenset(w for w in tokens(_PATH_RE.sub(_path_stem, text))
                     if w not in vague and not w.isdigit())


@cache
def _vague(tokens: Callable[[str], list[str]]) -> frozenset[str]:
    return frozenset(tokens(_VAGUE_TEXT))


@dataclass(frozen=True)
class Clause:
    family: str
    action: str  # the verb and what follows it, for meaning ("split into domain modules")
    about: frozenset[str]  # subject words
    objects: frozenset[str]  # what it is made into or with ("into domain modules": domain)


def _clauses(pattern: re.Pattern[str], text: str, files: Iterable[str], done: bool
             ) -> list[Clause]:
    out: list[Clause] = []
    stems = subject_words(" ".join(files))
    for found in pattern.finditer(text):
        before = text[:found.start()]
        clause_start = max((m.end() for m in _CLAUSE_START.finditer(before)), default=0)
        head = before[clause_start:]
        rest = found.group("rest")
        verb = found.group("verb").lower()
        if done and (_CONDITION.search(head) or re.match(r"\s*(?:not|never)\b", rest, re.I)):
            continue
        family = _BASE.get(verb, "restructure")  # a size problem asks for a restructure
        about = set(subject_words(head))
        # "should split X" / "has split X" act on X; "X should be split" / "X was split"
        active = (not _PASSIVE_DONE.match(found.group("aux"))) if done else (
            found.group("be") is None)
        if active:  # "TODO: split X", "we have split X": X is what it is about
            about |= subject_words(_PREPOSITION.split(rest, 1)[0])
        if not about:  # "it should be split": what the record said before, else its files
            about = set(subject_words(before)) or set(stems)
        words = rest.split()[:ACTION_WORDS]
        made = _REASON.split(" ".join(words), 1)[0]  # "dropped now that ...": no object
        out.append(Clause(family, " ".join([verb, *words]), frozenset(about),
                          subject_words(made) - about))
    return out


def plans(text: str, files: Iterable[str] = ()) -> list[Clause]:
    """What a record says should be done (or is too big), each with what it is about."""
    files = list(files)
    return _clauses(_PLAN_RE, text, files, False) + _clauses(_PROBLEM_RE, text, files, False)


def reports(text: str, files: Iterable[str] = ()) -> list[Clause]:
    """The changes a record reports done, each with what it was done to."""
    return _clauses(_DONE_RE, text, list(files), True)


def reports_done(text: str) -> bool:
    """Cheap: does this text report a change done at all (worth looking for plans)?"""
    return bool(reports(text))


# The cosine of two texts' embeddings, None when it cannot be had (ocm/indexer/likeness.py).
Meaning = Callable[[str, str], float | None]


def answered(old_text: str, new_text: str, files: Iterable[str],
             meaning: Meaning | None = None,
             threshold: float = THRESHOLD_ACTION) -> str:
    """How the newer record reports done what the older one planned, e.g. "should be split
    -> was refactored" ('' when it does not). `files`: the files the two records share."""
    files = list(files)
    done = reports(new_text, files)
    if not done:
        return ""
    still = plans(new_text, files)
    for plan in plans(old_text, files):
        for change in done:
            if not plan.about & change.about or any(
                    p.family == plan.family and p.about & plan.about for p in still):
                continue
            how = f"{plan.action!r} done: {change.action!r}"
            # What the changes made must not disagree: "must be updated to API version
            # 2024-06" is not answered by "was updated to retry on 429", nor "it should be
            # extracted into a decorator" (it: the retry loop of client.py) by "client.py
            # was split into two modules".
            objects_differ = (plan.objects and change.objects
                              and not plan.objects & change.objects)
            if plan.family == change.family and not objects_differ:
                return how
            cosine = meaning(plan.action, change.action) if meaning is not None else None
            if cosine is not None and cosine >= threshold:
                return f"{how} (meaning {cosine:.2f})"
    return ""
