"""The frontmatter ocm writes, read without PyYAML: `key: value` lines, `key: []`, and
`key:` over `- item` lines, each value a one-line plain or JSON-style double-quoted scalar.

`load` gives exactly what `yaml.load(text, Loader=CSafeLoader)` gives (the same keys, values
and types: the resolver's tags are decided with PyYAML's own patterns, copied below and
compared with the installed PyYAML's by the tests), or None for anything it cannot prove:
comments, blank or indented lines, anchors, tags, quotes it does not know, multi-line or
flow values, keys YAML would read as true/false/null, a value the resolver makes an int,
float or timestamp in a form other than the few built here. The caller then asks PyYAML,
so what a broken note is reported as does not change. A full build reads every note's
frontmatter; PyYAML's constructor was ~60 % of the time spent parsing a note.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

# PyYAML's implicit resolvers (yaml/resolver.py, 6.x) for the first characters a value
# taken here may start with; tests/test_plainyaml.py checks them against the installed copy.
_BOOL_NULL: dict[str, Any] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("~", "null", "Null", "NULL"), None),
}
FLOAT_PATTERN = r'''^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$'''
INT_PATTERN = r'''^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$'''
TIMESTAMP_PATTERN = r'''^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$'''
_FLOAT_RE = re.compile(FLOAT_PATTERN, re.X)
# What the int, float or timestamp resolver takes (they are all keyed on every digit).
_RESOLVED_RE = re.compile("|".join((INT_PATTERN, FLOAT_PATTERN, TIMESTAMP_PATTERN)), re.X)
# Resolver-free starts: no implicit resolver is keyed on these (letters other than
# yYnNtTfFoO only ever resolve through _BOOL_NULL's exact words, checked for all letters).
_LETTER_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_/(")
_DIGITS = frozenset("0123456789")

# The forms built here (the rest of what _RESOLVED_RE matches goes to PyYAML).
_BUILT_RE = re.compile(
    r"(?P<stamp>[0-9]{4}-[0-9]{2}-[0-9]{2}(?P<time>T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?)?)"
    r"|(?P<int>0|[1-9][0-9]{0,17})|(?P<float>[0-9]{1,15}\.[0-9]{1,15})")

# Characters libyaml reads as printable and not as a break, minus '#' (a comment after a
# space) and tabs: what the rest of a plain scalar may hold. A plain scalar also may not
# hold ': ' nor end in ':' or a space (checked apart).
_UNSAFE = "\\x00-\\x1f\\x7f-\\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff"
_PLAIN_RE = re.compile(f"[A-Za-z0-9_./(~][^#{_UNSAFE}]*")
# A JSON-style double-quoted scalar (what `emit_key` writes for other text) whose escapes,
# if any, mean the same to YAML and JSON.
_QUOTED_RE = re.compile(f'"(?:[^"\\\\{_UNSAFE}]|\\\\["\\\\nt])*"')
_ESCAPE_RE = re.compile(r"\\(.)")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
# A top-level key line (the key YAML reads as text, checked apart) and a block list item.
_KEY_LINE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63}):(?: (.*))?")
_ITEM_RE = re.compile(r"( *)- (.*)")
_FLOW_ITEM_RE = re.compile(r" *([A-Za-z0-9_./(~][A-Za-z0-9_./()~+@ -]*?) *")

_UNSURE = object()


def _unescape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group(1)]


def _plain(text: str) -> Any:
    """A plain scalar as the resolver and SafeConstructor make it, or _UNSURE."""
    first = text[0]
    if first in _LETTER_START:
        return _BOOL_NULL.get(text, text)
    if first in _DIGITS:
        found = _BUILT_RE.fullmatch(text)
        if found is None:
            return _UNSURE if _RESOLVED_RE.match(text) else text
        if found.lastgroup == "int":
            return int(text)
        if found.lastgroup == "float":
            return float(text)
        try:  # in these forms fromisoformat builds what SafeConstructor does ('Z': UTC)
            return (date.fromisoformat(text) if found.group("time") is None
                    else datetime.fromisoformat(text))
        except ValueError:  # PyYAML raises it too, and the caller's message names the key
            return _UNSURE
    if first == ".":
        return _UNSURE if _FLOAT_RE.match(text) else text
    if first == "~":
        return None if text == "~" else text
    return _UNSURE


def scalar(text: str) -> Any:
    """One value written on its line (after `key: ` or `- `), or _UNSURE."""
    if text[:1] == '"':
        if _QUOTED_RE.fullmatch(text) is None:
            return _UNSURE
        inner = text[1:-1]
        return _ESCAPE_RE.sub(_unescape, inner) if "\\" in inner else inner
    if (_PLAIN_RE.fullmatch(text) is None or ": " in text or text[-1] in ": "):
        return _UNSURE
    return _plain(text)


def _flow(text: str) -> list[Any] | None:
    """`[a, b]`: plain items without YAML's flow indicators, or None."""
    inner = text[1:-1]
    if not inner.strip(" "):
        return [] if not inner else None
    items: list[Any] = []
    for piece in inner.split(","):
        found = _FLOW_ITEM_RE.fullmatch(piece)
        if found is None:
            return None
        value = _plain(found.group(1))
        if value is _UNSURE:
            return None
        items.append(value)
    return items


def load(lines: list[str]) -> dict[str, Any] | None:
    """The mapping these frontmatter lines hold, exactly as PyYAML's safe load builds it,
    or None when they are not in a shape proven here (then ask PyYAML). No lines is None
    too: PyYAML reads an empty document as None, not as a mapping."""
    if not lines:
        return None
    data: dict[str, Any] = {}
    listed = ""  # the last `key:` written with no value: its block list's items may follow
    indent = -1  # the indentation of that list's items, -1 before the first
    for line in lines:
        if listed and (found := _ITEM_RE.fullmatch(line)) is not None:
            width, text = found.groups()
            if indent not in (-1, len(width)) or not text:
                return None
            indent = len(width)
            value = scalar(text)
            if value is _UNSURE:
                return None
            if data[listed] is None:
                data[listed] = []
            data[listed].append(value)
            continue
        found = _KEY_LINE_RE.fullmatch(line)
        if found is None:
            return None
        key, text = found.groups()
        if key in data or key in _BOOL_NULL:
            return None
        listed, indent = "", -1
        if text is None:
            data[key] = None
            listed = key
            continue
        if text[:1] == "[" and text[-1:] == "]":
            value = _flow(text)
            if value is None:
                return None
            data[key] = value
            continue
        value = scalar(text) if text else _UNSURE
        if value is _UNSURE:
            return None
        data[key] = value
    return data
