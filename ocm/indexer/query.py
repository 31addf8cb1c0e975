"""Pull date, tool and path filters out of a natural-language search query.

``parse_query("cursor session about auth last week", now)`` returns the text
``"auth"`` plus the previous calendar week as ``since``/``until`` and
``tool="cursor"`` ("past week" would be the last 7 days). The parser is
deliberately conservative: only explicit phrases become filters, because a
false filter silently hides the note the user is looking for, while a missed
filter merely leaves a few extra words in a BM25 query.

Dates are naive local datetimes; ``since`` is inclusive and ``until`` exclusive.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from dateutil.relativedelta import relativedelta

__all__ = ["MAX_FILTER_QUERY_WORDS", "TOOLS", "ParsedQuery", "canonical_tool", "parse_query"]

# Filters are read from search phrases, not from long pasted text.
MAX_FILTER_QUERY_WORDS = 20


@dataclass(frozen=True)
class ParsedQuery:
    """A search query split into free text and structured filters."""

    text: str
    since: datetime | None
    until: datetime | None
    tool: str | None
    paths: tuple[str, ...]


TOOLS: tuple[str, ...] = (
    "claude-code",
    "cursor",
    "codex",
    "gemini",
    "vscode",
    "opencode",
    "windsurf",
    "antigravity",
    "copilot",
    "qwen",
    "droid",
    "kilo",
)

# Keys are normalised by _norm_tool (casefolded, runs of space/_/- -> one space).
# "cc" is accepted here, where the caller explicitly names a tool, but never in
# free text, where it is far more likely to mean the C compiler.
_TOOL_ALIASES: dict[str, str] = {
    "claude code": "claude-code",
    "claudecode": "claude-code",
    "claude": "claude-code",
    "claude cli": "claude-code",
    "cc": "claude-code",
    "cursor": "cursor",
    "cursor ide": "cursor",
    "codex": "codex",
    "codex cli": "codex",
    "openai codex": "codex",
    "gemini": "gemini",
    "gemini cli": "gemini",
    "google gemini": "gemini",
    "vscode": "vscode",
    "vs code": "vscode",
    "visual studio code": "vscode",
    "code oss": "vscode",
    "copilot": "copilot",
    "copilot cli": "copilot",
    "github copilot": "vscode",
    "copilot chat": "vscode",
    "opencode": "opencode",
    "open code": "opencode",
    "windsurf": "windsurf",
    "codeium": "windsurf",
    "antigravity": "antigravity",
    "google antigravity": "antigravity",
    "qwen": "qwen",
    "qwen code": "qwen",
    "droid": "droid",
    "factory droid": "droid",
    "kilo": "kilo",
    "kilo cli": "kilo",
    "kilo code": "kilo",
    "kilocode": "kilo",
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOOL_SEP = re.compile(r"[\s_\-]+")


def _norm_tool(name: str) -> str:
    return _TOOL_SEP.sub(" ", name.casefold()).strip()


def canonical_tool(name: str) -> str | None:
    """Map a tool name or alias ("Claude Code", "copilot", "gemini cli") to its canonical id."""
    return _TOOL_ALIASES.get(_norm_tool(name))


# Token boundaries that also reject matches glued to paths, identifiers and
# file names, so "src/today/x.py", "cursor.py" or "notes-2026-03-15" never
# yield filters. A trailing "." is allowed only as sentence punctuation.
_L = r"(?<![\w/\\.\-@#])"
_R = r"(?![\w/\\\-@]|\.\w)"

_MONTHS: dict[str, int] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
    "july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_WEEKDAYS: dict[str, int] = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3,
    "friday": 4, "saturday": 5, "sunday": 6,
}  # fmt: skip
_NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
}  # fmt: skip

_MONTH_FULL = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
)
_MONTH_ANY = _MONTH_FULL + "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_WEEKDAY = "|".join(_WEEKDAYS)
_YEAR = r"(?:19|20)[0-9]{2}"
_DAY = r"(?:3[01]|[12][0-9]|0?[1-9])(?![0-9])(?:st|nd|rd|th)?"
_NUM = r"[0-9]{1,4}|(?:a\s+)?couple\s+of|(?:a\s+)?few|" + "|".join(
    w for w in _NUMBER_WORDS if " " not in w
)

# Alternatives of a single date expression, each resolving to a [start, end) range.
_DATE_FORMS: dict[str, str] = {
    "iso": rf"{_YEAR}-(?:1[0-2]|0?[1-9])-(?:3[01]|[12][0-9]|0?[1-9])(?![0-9])",
    # Dotted dates are day-first wherever they are written (10.01.2024 = 10 January).
    "dotted": rf"(?:3[01]|[12][0-9]|0?[1-9])\.(?:1[0-2]|0?[1-9])\.{_YEAR}(?![0-9.])",
    "ym": rf"{_YEAR}-(?:1[0-2]|0[1-9])(?![0-9\-])",
    "md": rf"(?:{_MONTH_ANY})\.?\s+{_DAY}(?:(?:,\s*|\s+){_YEAR})?",
    "dm": rf"{_DAY}\s+(?:of\s+)?(?:{_MONTH_ANY})\.?(?:(?:,\s*|\s+){_YEAR})?",
    "my": rf"(?:{_MONTH_ANY})\.?,?\s+{_YEAR}",
    "mon": rf"(?:{_MONTH_FULL})",
    "year": _YEAR,
    "rel": r"(?:today|yesterday)(?:['’]s)?",
    "ago": rf"(?:{_NUM})\s+(?:days?|weeks?|months?)\s+ago",
    "wd": rf"(?:last\s+)?(?:{_WEEKDAY})",
}
# Forms that are explicit enough to stand without a preposition. A bare year
# or month name is not: "429", "2025 budget" and "march forward" are ordinary text.
_BARE_FORMS = ("iso", "dotted", "md", "dm", "my", "rel", "ago", "wd")
# Which forms each preposition may introduce ("on march" and "in yesterday" are
# not things people write, and accepting them only widens the false-positive net).
_DAY_FORMS = frozenset({"iso", "dotted", "md", "dm", "rel", "ago", "wd"})
_PERIOD_FORMS = frozenset({"ym", "my", "mon", "year"})
_ALL_FORMS = frozenset(_DATE_FORMS)
_PREP_FORMS: dict[str, frozenset[str]] = {
    "on": _DAY_FORMS,
    "in": _PERIOD_FORMS,
    "during": _PERIOD_FORMS,
    "from": _ALL_FORMS,
    "since": _ALL_FORMS,
    "after": _ALL_FORMS,
    "before": _ALL_FORMS,
    "until": _ALL_FORMS,
    "till": _ALL_FORMS,
    "through": _ALL_FORMS,
    "thru": _ALL_FORMS,
}


def _date_pattern(prefix: str, forms: tuple[str, ...] = tuple(_DATE_FORMS)) -> str:
    return "(?:" + "|".join(f"(?P<{prefix}{f}>{_DATE_FORMS[f]})" for f in forms) + ")"


_FLAGS = re.IGNORECASE


@functools.cache
def _range_re() -> re.Pattern[str]:
    # Compiled on first need (~10 ms, the largest pattern here): only queries holding
    # "between" or "from" can match it.
    return re.compile(
        rf"{_L}(?:between\s+{_date_pattern('a_')}\s+and\s+{_date_pattern('b_')}"
        rf"|from\s+{_date_pattern('c_')}(?:\s+(?:to|until|till|through|thru)\s+|\s*[-–]\s*)"
        rf"{_date_pattern('d_')}){_R}",
        _FLAGS,
    )


@functools.cache
def _prep_re() -> re.Pattern[str]:
    return re.compile(
        rf"{_L}(?P<prep>{'|'.join(_PREP_FORMS)})\s+{_date_pattern('p_')}{_R}",
        _FLAGS,
    )


_BARE = "x_"


@functools.cache
def _bare_re() -> re.Pattern[str]:
    return re.compile(rf"{_L}{_date_pattern(_BARE, _BARE_FORMS)}{_R}", _FLAGS)


# Every date form above holds a digit, a month or weekday name (or its first letters),
# "today", "yesterday" or "ago". A query with none of them skips the date patterns,
# whose compiling is most of this module's import cost (~15 ms).
_MAYBE_DATE = re.compile(
    r"[0-9]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"
    r"|today|yesterday|ago",
    _FLAGS,
)
_ROLLING_RE = re.compile(
    rf"{_L}(?:(?:in|over|during|within|for|from|since)\s+)?(?:the\s+)?"
    rf"(?P<which>last|past|previous)\s+(?:(?P<n>{_NUM})\s+)?"
    rf"(?P<unit>hours?|days?|weeks?|months?|years?){_R}",
    _FLAGS,
)
_THIS_RE = re.compile(
    rf"{_L}(?:(?:in|during|from|since|for)\s+)?this\s+(?P<unit>week|month|year){_R}",
    _FLAGS,
)

# Words that, right after "may", show it is the modal verb ("in may be stale").
_MODAL_FOLLOWERS = _words(
    """be have not need want also still cause break fail help work require use take get make
    return throw happen lead contain affect only just never already seem look mean include
    involve differ vary change depend result"""
)
# "in 2000 lines" is a count, not a year.
_UNIT_FOLLOWERS = _words(
    """ms s sec secs second seconds min mins minute minutes line lines row rows item items
    byte bytes kb mb gb tb user users record records file files request requests token
    tokens error errors test tests times x px"""
)
# A preceding word that turns a following window around ("before last week").
_REVERSING_PREV = frozenset({"before", "until", "till", "prior", "to", "than"})

# --- tools -----------------------------------------------------------------

_TOOL_NAME = (
    r"claude[\s\-]?code|claude|cursor|codex(?:[\s\-]cli)?|gemini(?:[\s\-]cli)?"
    r"|vs[\s\-]?code|visual\s+studio\s+code|(?:github\s+)?copilot(?:\s+chat)?"
    r"|windsurf|antigravity"
)
_SESSION_WORDS = r"sessions?|chats?|conversations?|transcripts?|threads?|history|histories"
_TOOL_RE = re.compile(
    rf"{_L}(?:"
    rf"(?P<prep>in|from|with|using|via|inside|within)\s+(?:(?P<det>the|a|an|my|our)\s+)?"
    rf"(?P<tool1>{_TOOL_NAME})(?:\s+(?P<suffix1>{_SESSION_WORDS}))?"
    rf"|(?P<tool2>{_TOOL_NAME})\s+(?P<suffix2>{_SESSION_WORDS})"
    rf"){_R}",
    _FLAGS,
)
# "cursor" is also a database/UI noun. Without a session word, "in cursor" only
# counts when the phrase ends the query or is followed by a word that starts a
# new clause, so "off-by-one in cursor pagination" keeps its meaning.
_AMBIGUOUS_TOOLS = frozenset({"cursor"})
_AMBIGUOUS_PREPS = frozenset({"in", "from", "inside", "within"})
_CLAUSE_WORDS = _words(
    """about on for regarding re concerning around related last past this previous today
    yesterday since before after until till during in with from when where that which and
    or but to of is was were did do does while sessions session i we"""
)
_CURSOR_CONTEXT = _words(
    """db database sql sqlite postgres postgresql mysql mongo mongodb psycopg psycopg2 orm
    fetch fetched fetching read reading row rows result results record records data value
    values iterate iterating iterator item items query queries mouse text blinking paginate
    pagination server-side client-side scrollable named"""
)

# --- paths -----------------------------------------------------------------

_EXTENSIONS = sorted(
    _words(
        "py ts tsx js jsx go rs java kt rb php c h cpp hpp cs swift yaml yml json toml md sql "
        "sh css html ini cfg env lock txt proto tf"
    )
)
# A stem is required: ".py" alone ("the .py files") names a type, not a file.
_EXT_RE = re.compile(r"[^/\\.]\.(?:" + "|".join(_EXTENSIONS) + r")$", _FLAGS)
_DOTFILE_RE = re.compile(r"^\.env$", _FLAGS)
_LINE_SUFFIX = re.compile(r":[0-9]+(?::[0-9]+)?$")
_STRIP_CHARS = "\"'`()[]{}<>,;!?*“”‘’"
# Product names that look like file names, and slash pairs common in prose.
_NOT_PATHS = _words(
    """node.js next.js nuxt.js vue.js react.js express.js three.js d3.js chart.js ember.js
    backbone.js angular.js alpine.js p5.js moment.js day.js solid.js ext.js htmx.js
    and/or either/or on/off yes/no true/false he/she his/her s/he read/write
    client/server async/await try/catch input/output request/response get/set key/value
    frontend/backend front-end/back-end dev/prod pros/cons"""
)
_NUMERIC_PATH = re.compile(r"^[0-9/.\-]+$")

# Words left dangling at the edges once a filter phrase is cut out
# ("cursor session about auth" -> "about auth" -> "auth").
_EDGE_WORDS = _words(
    """about regarding concerning re on for of in from with during since and or the to at
    by any"""
)
_PUNCT_ONLY = re.compile(r"^[^\w/]+$")


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    tool: str | None = None
    since: datetime | None = None
    until: datetime | None = None


Range = tuple[datetime, datetime]


def _dateutil_parse(text: str, **kwargs: Any) -> datetime:
    # dateutil's parser costs ~25 ms to import; most queries name no date.
    from dateutil.parser import parse

    return parse(text, **kwargs)


def _day(d: date) -> datetime:
    return datetime.combine(d, time())


def _month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1)


def _past_year_for(month: int, day: int, today: date, year: int | None) -> int:
    """Year of a month/day given without one: the most recent that is not in the future."""
    if year is not None:
        return year
    if (month, day) > (today.month, today.day):
        return today.year - 1
    return today.year


def _parse_count(text: str) -> int | None:
    key = " ".join(text.casefold().split())
    if key.isdigit():
        return int(key)
    return _NUMBER_WORDS.get(key)


def _word_after(query: str, pos: int) -> str:
    rest = query[pos:].split(None, 1)
    return rest[0].casefold().strip(".,;:!?)") if rest else ""


def _word_before(query: str, pos: int) -> str:
    head = query[:pos].rsplit(None, 1)
    return head[-1].casefold().strip(".,;:!?(") if head else ""


def _resolve_date(m: re.Match[str], prefix: str, now: datetime, query: str) -> tuple[str, Range]:
    """The form name and [start, end) of the date expression captured under ``prefix``.

    Raises ValueError when the text matched the shape of a date but is not one.
    """
    today = now.date()
    for form in _DATE_FORMS:
        raw = m.group(prefix + form) if (prefix + form) in m.re.groupindex else None
        if raw:
            break
    else:  # pragma: no cover - the patterns always capture exactly one form
        raise ValueError("no date form matched")
    text = " ".join(raw.casefold().split())

    if form == "dotted":
        day, month, full_year = (int(part) for part in text.split("."))
        d = date(full_year, month, day)
        return form, (_day(d), _day(d + timedelta(days=1)))
    if form in ("iso", "md", "dm"):
        has_year = re.search(_YEAR + r"$", text) is not None or form == "iso"
        # Only the candidate substring reaches dateutil, never the whole query:
        # with the full text it happily turns "429" or "2 retries" into dates.
        parsed = _dateutil_parse(text, default=datetime(today.year, 1, 1), fuzzy=False)
        year = parsed.year if has_year else None
        if form == "dm" and prefix == _BARE and "may" in text and not has_year:
            # "3 may be enough": a number followed by the verb, not a date.
            raise ValueError("ambiguous day-first 'may'")
        d = date(_past_year_for(parsed.month, parsed.day, today, year), parsed.month, parsed.day)
        return form, (_day(d), _day(d + timedelta(days=1)))
    if form in ("ym", "my"):
        parsed = _dateutil_parse(text, default=datetime(today.year, 1, 1), fuzzy=False)
        start = _month_start(parsed.year, parsed.month)
        return form, (start, start + relativedelta(months=1))
    if form == "mon":
        month = _MONTHS[text]
        if month == 5 and _word_after(query, m.end()) in _MODAL_FOLLOWERS:
            raise ValueError("modal 'may'")
        year = today.year if month <= today.month else today.year - 1
        start = _month_start(year, month)
        return form, (start, start + relativedelta(months=1))
    if form == "year":
        if _word_after(query, m.end()) in _UNIT_FOLLOWERS:
            raise ValueError("a count, not a year")
        year = int(text)
        return form, (datetime(year, 1, 1), datetime(year + 1, 1, 1))
    if form == "rel":
        d = today if text.startswith("today") else today - timedelta(days=1)
        return form, (_day(d), _day(d + timedelta(days=1)))
    if form == "ago":
        count_text, unit, _ago = text.rsplit(" ", 2)
        n = _parse_count(count_text)
        if n is None:
            raise ValueError(f"not a count: {count_text!r}")
        if unit.startswith("day"):
            d = today - timedelta(days=n)
            return form, (_day(d), _day(d + timedelta(days=1)))
        if unit.startswith("week"):
            d = today - timedelta(weeks=n)
            monday = d - timedelta(days=d.weekday())
            return form, (_day(monday), _day(monday + timedelta(days=7)))
        start = _month_start(today.year, today.month) - relativedelta(months=n)
        return form, (start, start + relativedelta(months=1))
    # form == "wd": the most recent such day; "last friday" never means today.
    words = text.split()
    target = _WEEKDAYS[words[-1]]
    back = (today.weekday() - target) % 7
    if len(words) == 2 and back == 0:
        back = 7
    d = today - timedelta(days=back)
    return form, (_day(d), _day(d + timedelta(days=1)))


def _range_hits(query: str, now: datetime) -> list[_Hit]:
    folded = query.casefold()
    if "between" not in folded and "from" not in folded:
        return []
    hits = []
    for m in _range_re().finditer(query):
        between = m.group(0).casefold().startswith("between")
        first, second = ("a_", "b_") if between else ("c_", "d_")
        try:
            _, (since, _) = _resolve_date(m, first, now, query)
            _, (_, until) = _resolve_date(m, second, now, query)
        except (ValueError, OverflowError, KeyError):
            continue
        if since < until:
            hits.append(_Hit(m.start(), m.end(), since=since, until=until))
    return hits


def _prep_hits(query: str, now: datetime) -> list[_Hit]:
    hits = []
    for m in _prep_re().finditer(query):
        prep = m.group("prep").casefold()
        try:
            form, (start, end) = _resolve_date(m, "p_", now, query)
        except (ValueError, OverflowError, KeyError):
            continue
        if form not in _PREP_FORMS.get(prep, frozenset()):
            continue
        if prep == "since":
            hit = _Hit(m.start(), m.end(), since=start)
        elif prep == "after":
            hit = _Hit(m.start(), m.end(), since=end)
        elif prep == "before":
            hit = _Hit(m.start(), m.end(), until=start)
        elif prep in ("until", "till", "through", "thru"):
            hit = _Hit(m.start(), m.end(), until=end)
        else:  # on, in, during, from: the period itself
            hit = _Hit(m.start(), m.end(), since=start, until=end)
        hits.append(hit)
    return hits


def _bare_hits(query: str, now: datetime) -> list[_Hit]:
    hits = []
    for m in _bare_re().finditer(query):
        try:
            form, (start, end) = _resolve_date(m, _BARE, now, query)
        except (ValueError, OverflowError, KeyError):
            continue
        if form == "wd" and not m.group(0).casefold().startswith("last"):
            continue  # a bare weekday name is too weak ("monday standup notes")
        hits.append(_Hit(m.start(), m.end(), since=start, until=end))
    return hits


def _rolling_hits(query: str, now: datetime) -> list[_Hit]:
    hits = []
    for m in _ROLLING_RE.finditer(query):
        if _word_before(query, m.start()) in _REVERSING_PREV:
            continue
        unit = m.group("unit").casefold().rstrip("s")
        if m.group("n") is None:
            # "last day" / "last hour" read as "final", not as a window.
            if unit in ("day", "hour") and m.group("which").casefold() != "past":
                continue
            if m.group("unit").casefold().endswith("s"):
                continue  # "the last days" has no count
            n = 1
        else:
            parsed = _parse_count(m.group("n"))
            if parsed is None:
                continue
            n = parsed
        if m.group("n") is None and m.group("which").casefold() != "past" and unit in (
                "week", "month", "year"):
            # "last week" is the previous calendar week; "past week" is the last 7 days.
            since, until = _previous_period(unit, now.date())
            hits.append(_Hit(m.start(), m.end(), since=since, until=until))
            continue
        days = {"hour": n / 24, "day": n, "week": 7 * n, "month": 30 * n, "year": 365 * n}[unit]
        try:
            since = now - timedelta(days=days)
        except OverflowError:
            continue
        hits.append(_Hit(m.start(), m.end(), since=since))
    return hits


def _previous_period(unit: str, today: date) -> tuple[datetime, datetime]:
    if unit == "week":
        this_monday = today - timedelta(days=today.weekday())
        return _day(this_monday - timedelta(days=7)), _day(this_monday)
    if unit == "month":
        first = _month_start(today.year, today.month)
        previous = first - relativedelta(months=1)
        return previous, first
    return datetime(today.year - 1, 1, 1), datetime(today.year, 1, 1)


def _this_hits(query: str, now: datetime) -> list[_Hit]:
    hits = []
    today = now.date()
    for m in _THIS_RE.finditer(query):
        unit = m.group("unit").casefold()
        if unit == "week":
            since = _day(today - timedelta(days=today.weekday()))
        elif unit == "month":
            since = _month_start(today.year, today.month)
        else:
            since = datetime(today.year, 1, 1)
        hits.append(_Hit(m.start(), m.end(), since=since))
    return hits


def _tool_hits(query: str) -> list[_Hit]:
    hits = []
    for m in _TOOL_RE.finditer(query):
        name = m.group("tool1") or m.group("tool2")
        tool = canonical_tool(name)
        if tool is None:  # pragma: no cover - every _TOOL_NAME spelling has an alias
            continue
        if _norm_tool(name) in _AMBIGUOUS_TOOLS:
            if _word_before(query, m.start()) in _CURSOR_CONTEXT:
                continue
            if m.group("tool1") and not m.group("suffix1"):
                if m.group("det") or m.group("prep").casefold() not in _AMBIGUOUS_PREPS:
                    continue
                nxt = _word_after(query, m.end())
                rest = query[m.end() :].lstrip()
                if rest and rest[0].isalnum() and nxt not in _CLAUSE_WORDS and not nxt.isdigit():
                    continue
        hits.append(_Hit(m.start(), m.end(), tool=tool))
    return hits


def _clean_path(token: str) -> str | None:
    tok = token.strip(_STRIP_CHARS)
    for _ in range(2):
        if len(tok) > 1 and tok[-1] in ".:" and tok[-2].isalnum():
            tok = tok[:-1].strip(_STRIP_CHARS)
    tok = _LINE_SUFFIX.sub("", tok)
    if not tok or "://" in tok or tok.casefold() in _NOT_PATHS:
        return None
    if "/" in tok:
        segments = [s for s in re.split(r"[/\\]", tok) if s]
        if not any(ch.isalnum() for ch in tok) or _NUMERIC_PATH.match(tok):
            return None
        if all(len(s) <= 1 for s in segments):
            return None  # w/o, i/o, a/b
        if "." not in tok and not any(ch.islower() for ch in tok):
            return None  # acronym pairs: TCP/IP, CI/CD, UI/UX
        return tok
    if _EXT_RE.search(tok) or _DOTFILE_RE.match(tok):
        return tok
    return None


def _find_paths(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for token in text.split():
        path = _clean_path(token)
        if path is not None:
            found.setdefault(path, None)
    return tuple(found)


def _select(hits: list[_Hit]) -> list[_Hit]:
    """Longest non-overlapping hits, in query order."""
    chosen: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start - h.end, h.start)):
        if all(hit.end <= c.start or hit.start >= c.end for c in chosen):
            chosen.append(hit)
    return sorted(chosen, key=lambda h: h.start)


def _strip_edges(words: list[str]) -> list[str]:
    while words and (words[0].casefold() in _EDGE_WORDS or _PUNCT_ONLY.match(words[0])):
        words.pop(0)
    while words and (words[-1].casefold() in _EDGE_WORDS or _PUNCT_ONLY.match(words[-1])):
        words.pop()
    return [w for w in words if not _PUNCT_ONLY.match(w)]


_DATE_FINDERS: tuple[Callable[[str, datetime], list[_Hit]], ...] = (
    _range_hits,
    _prep_hits,
    _bare_hits,
)
_PERIOD_FINDERS: tuple[Callable[[str, datetime], list[_Hit]], ...] = (
    _rolling_hits,
    _this_hits,
)


def parse_query(query: str, now: datetime) -> ParsedQuery:
    """Split ``query`` into search text and filters, resolving dates against ``now``."""
    if now.tzinfo is not None:
        now = now.astimezone().replace(tzinfo=None)
    if len(query.split()) > MAX_FILTER_QUERY_WORDS:
        # A pasted paragraph (an issue, a stack trace): its dates and tool names are
        # content, not filters ("Python 3.9 (main, Feb 1 2022)" must not hide every note).
        text = " ".join(query.split())
        return ParsedQuery(text=text, since=None, until=None, tool=None, paths=_find_paths(text))
    hits: list[_Hit] = _tool_hits(query)
    finders = (*_DATE_FINDERS, *_PERIOD_FINDERS) if _MAYBE_DATE.search(query) else (
        _PERIOD_FINDERS)
    for finder in finders:
        hits.extend(finder(query, now))

    tool: str | None = None
    windows: list[tuple[datetime | None, datetime | None]] = []
    removed: list[_Hit] = []
    for hit in _select(hits):
        if hit.tool is not None:
            if tool is not None and hit.tool != tool:
                continue  # one tool filter only; the rival name stays searchable text
            tool = hit.tool
        else:
            windows.append((hit.since, hit.until))
        removed.append(hit)

    since, until = _combine(windows)

    if removed:
        pieces, pos = [], 0
        for hit in removed:
            pieces.append(query[pos : hit.start])
            pos = hit.end
        pieces.append(query[pos:])
        text = " ".join(_strip_edges(" ".join(pieces).split()))
    else:
        text = " ".join(query.split())

    return ParsedQuery(text=text, since=since, until=until, tool=tool, paths=_find_paths(text))


def _combine(
    windows: list[tuple[datetime | None, datetime | None]],
) -> tuple[datetime | None, datetime | None]:
    """Intersect date windows; if they contradict each other, trust the first one."""
    if not windows:
        return None, None
    sinces = [s for s, _ in windows if s is not None]
    untils = [u for _, u in windows if u is not None]
    since = max(sinces) if sinces else None
    until = min(untils) if untils else None
    if since is not None and until is not None and since >= until:
        return windows[0]
    return since, until
