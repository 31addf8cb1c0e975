"""The frontmatter fast path (ocm/vault/plainyaml.py) against PyYAML's safe load: the same
mapping with the same types for every frontmatter shape ocm writes (through its real write
paths and the bench generator), PyYAML's answer or None for anything else, and the resolver
patterns it copied equal to the installed PyYAML's."""

from __future__ import annotations

import itertools
import random
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ocm.project import Project
from ocm.vault import plainyaml
from ocm.vault.errors import NoteFormatError
from ocm.vault.markdown import Document, Frontmatter, emit_key
from ocm.vault.sessions import CheckpointInput

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import perf  # noqa: E402  (bench/perf.py: the generated vault the build benchmarks read)

BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"


def pyyaml(lines: list[str]) -> Any:
    return yaml.load("\n".join(lines), Loader=yaml.CSafeLoader)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 == 1.0 == True is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, datetime):
        return a == b and a.tzinfo is b.tzinfo
    return bool(a == b) or (a != a and b != b)


def check(lines: list[str]) -> Any:
    """What the fast path gives, after asserting it is PyYAML's answer (or None)."""
    fast = plainyaml.load(lines)
    try:
        slow = pyyaml(lines)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError):
        assert fast is None, lines
        return None
    if fast is not None:
        assert same(fast, slow), (lines, fast, slow)
    return fast


def frontmatter_lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    assert lines[0] == "---"
    return lines[1:lines.index("---", 1)]


# --------------------------------------------------------------------------- the resolver


def test_copied_resolver_patterns_are_the_installed_pyyamls() -> None:
    table = yaml.resolver.Resolver.yaml_implicit_resolvers
    patterns = {tag: regexp.pattern for pairs in table.values() for tag, regexp in pairs}
    assert patterns["tag:yaml.org,2002:int"] == plainyaml.INT_PATTERN
    assert patterns["tag:yaml.org,2002:float"] == plainyaml.FLOAT_PATTERN
    assert patterns["tag:yaml.org,2002:timestamp"] == plainyaml.TIMESTAMP_PATTERN
    # The letters' resolvers are only the bool and null words the fast path knows.
    words: set[str] = set()
    for tag in (BOOL, NULL):
        alternatives = patterns[tag].removeprefix("^(?:").removesuffix(")$")
        words |= {w.strip() for w in alternatives.split("|") if w.strip()}
    assert words == set(plainyaml._BOOL_NULL)
    for word in words:
        assert same(plainyaml.scalar(word), pyyaml([word]))
    # Which first characters each resolver is keyed on: none on the starts taken as text,
    # only int/float/timestamp on digits, only float on '.', only null on '~'.
    for first, pairs in table.items():
        tags = {tag for tag, _ in pairs}
        if first in plainyaml._LETTER_START:
            assert tags <= {BOOL, NULL}, first
        elif first and first in "0123456789":
            assert tags == {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                            "tag:yaml.org,2002:timestamp"}
        elif first == ".":
            assert tags == {"tag:yaml.org,2002:float"}
        elif first == "~":
            assert tags == {NULL}
    assert None not in table  # no wildcard resolver


# --------------------------------------------------------------------------- what ocm writes


def test_every_note_of_the_bench_vault_is_read_fast_and_the_same(tmp_path: Path) -> None:
    perf.generate_vault(tmp_path / "vault", 300)
    notes = sorted((tmp_path / "vault").rglob("*.md"))
    assert len(notes) > 250
    for path in notes:
        lines = frontmatter_lines(path.read_text(encoding="utf-8"))
        assert check(lines) is not None, path


def _written_by_ocm(project: Project) -> list[Path]:
    odd_titles = [
        "Plain title", "yes", "No", "null", "~", "429", "0x10", "1_000", "1e3", ".5", "3.14",
        "2024-01-01", "2024-01-01T10:00:00", "12:30", "a: b", "C# and F#", "# heading",
        "ends with colon:", "  padded  ", "tab\there", 'say "hi"', "it's", "back\\slash",
        "- dash", "[[link]]", "{x}", "&anchor", "*star", "!tag", "@at", "`tick`", "%pct",
        "naïve café ✓", "emoji 🚀 rocket", "line\u2028sep", "ＦＵＬＬ", "٣ arabic digit",
        "on", "OFF", "true story", "null pointer", ">folded", "|literal", "a #b", "a#b",
    ]
    session = project.start_session("claude-code", slug="fast-path").id
    project.checkpoint(CheckpointInput(
        goal="Read frontmatter fast", tags=["perf", "yes", "2024", "0x1F", "a b", "é"],
        work_completed=["one"], work_pending=["two"], decisions=["three"]), session)
    project.close_session(session)
    made = []
    for number, title in enumerate(odd_titles):
        made.append(project.remember(
            f"Memory number {number} about {title!r}.", "decision", title=title,
            tags=[title, "tag", str(number)], files=[f"src/{number}.py", title],
            importance=1 + number % 10, session=session, check_copies=False,
            created=datetime(2024, 1 + number % 12, 1 + number % 28, number % 24, 5, 6)))
    old = project.remember("We use Celery.", "decision", key="jobs-runner")
    project.remember("We use RQ now.", "decision", key="jobs-runner",
                     supersede_reason="moved: to RQ")
    project.forget(made[0].id)
    project.update_memory(made[1].id, title="Renamed: twice", tags=["x"])
    assert old.path is not None
    return sorted(project.vault.root.rglob("*.md"))


def test_notes_written_by_ocm_read_the_same(project: Project) -> None:
    notes = _written_by_ocm(project)
    assert len(notes) > 40
    slow = []
    for path in notes:
        lines = frontmatter_lines(path.read_text(encoding="utf-8"))
        if check(lines) is None:
            slow.append(lines)
    # Every note here is in a shape the fast path proves, but for a raw line separator
    # (U+2028, which libyaml reads as a line break) inside a quoted value.
    assert len(slow) == 1 and all("\u2028" in "".join(lines) for lines in slow)


@pytest.mark.parametrize("value", [
    True, False, 0, 7, 10, 2**40, 0.5, 1e-05, 3.0, "", "x", "yes", "null", "~", "0x10",
    "1_000", "1e3", ".5", "+1", "-1", "007", "08", "2024-01-01", "2024-1-1",
    "2024-01-01 10:00:00", "10:30", "190:20:30", ".inf", ".nan", "a: b", "a #b", "C#",
    "trailing ", " leading", "é", "\u00a0", "\x85", "\ufeff", "\u2028", "'quoted'",
    '"dq"', "\\", "\\n", "\t", "\n", "[[x]]", "[a, b]", "{a: b}", "- x", "? x", "%x", "@x",
    "`x`", "!x", "&x", "*x", "|", ">", "=", "<<", datetime(2024, 2, 29, 23, 59, 59),
    date(2024, 2, 29), ["a", "b"], ["yes", 1, "2024-01-01"],
])
def test_values_emit_key_writes_read_the_same(value: Any) -> None:
    lines = ["id: x", *emit_key("key", value), "status: active"]
    check(lines)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_TEXT, st.lists(_TEXT, max_size=3), st.integers(), st.booleans(),
                 st.floats(allow_nan=False), st.datetimes(), st.dates()))
def test_any_value_emit_key_writes_reads_the_same(value: Any) -> None:
    check(["id: x", *emit_key("key", value)])


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"),
               min_size=1, max_size=24))
def test_any_text_written_raw_reads_the_same(text: str) -> None:
    for lines in (["key: " + text], ["key:", "- " + text], ["key: [" + text + "]"]):
        check(lines)


# --------------------------------------------------------------------------- hand-made


TRICKY_VALUES = [
    "yes", "Yes", "YES", "no", "NO", "on", "On", "off", "OFF", "y", "n", "Y", "N", "true",
    "False", "null", "Null", "NULL", "~", "~x", "nul", "none", "None", "0x10", "0X10", "0b11",
    "0o17", "017", "018", "0", "00", "-0", "+5", "1_000", "1,000", "1e3", "1.0e3", "1.0e+3",
    "1.5", "1.", ".5", "._5", ".inf", "-.inf", ".NaN", ".nan", "1:30", "1:30.5", "190:20:30",
    "99999999999999999999999", "2024-01-01", "2024-02-30", "2024-1-1", "2024-01-01T10:00:00",
    "2024-01-01T10:00:00Z", "2024-01-01t10:00:00", "2024-01-01 10:00:00",
    "2024-01-01T10:00:00.5", "2024-01-01T10:00:00+02:00", "2024-01-01T25:00:00",
    "2024-13-01", "20240101", "7d67d34e2268", "07c482436867", "1234567", "12e4567",
    "deadbeef", "2025-11-11_04-23_claude-code_vite", "a: b", "a:b", "a:", "http://x.y/z",
    "a #b", "a#b", "#a", "a  b", "a ", "'a'", "'a", "\"a\"", "\"a", "\"a\\\"b\"",
    "\"a\\nb\"", "\"a\\tb\"", "\"a\\u00e9\"", "\"a\\/b\"", "\"a\\x41\"", "\"a\\\\b\"",
    "\"\"", "\"a\" b", "\"a #b\"", "\"a: b\"", "naïve", "日本語", "🚀", "a\u00a0b",
    "a\u2028b", "a\x85b", "a\x7fb", "a\ufeffb", "[]", "[a]", "[a, b]", "[a,b]", "[ a , b ]",
    "[a, ]", "[, a]", "[a b, c]", "[yes, 1, 2024-01-01]", "[a: b]", "[\"a\"]", "[[a]]",
    "[a, [b]]", "{}", "{a: b}", "&a x", "*a", "!!str 1", "!x y", "|", ">", "? a", "- a",
    "-a", "--", "%TAG", "@a", "`a`", "=", "<<", "(a)", "/abs/path.py", "./rel.py",
    "src/a.py", "_x", "x_", "a,b", "a]", "a}", "a\\b", "TODO:", "ends:", "a : b",
]


@pytest.mark.parametrize("value", TRICKY_VALUES)
def test_tricky_values_as_value_item_and_flow_item(value: str) -> None:
    for lines in (["key: " + value], ["key:", "- " + value], ["key:", "  - " + value],
                  ["key: [" + value + "]"], ["a: 1", "key: " + value, "b: 2"]):
        check(lines)


@pytest.mark.parametrize("lines", [
    [], [""], ["# comment"], ["a: 1 # comment"], ["a: 1", "", "b: 2"], ["a: 1", "  "],
    ["a: 1", "a: 2"], ["yes: 1"], ["null: 1"], ["on: x"], ["No: x"], ["y: 1"], ["_k: 1"],
    ["k-1: v"], ["k.1: v"], ["1: x"], ["a b: x"], ["a : x"], ["a:x"], ["a:  x"], ["a:\tx"],
    ["a: x", "  continued"], ["a:", "  b: 1"], ["a:", "- x", "  - y"], ["a:", "  - x", "- y"],
    ["a:", "- x", "b:"], ["a:", "-"], ["a:", "- "], ["a:", "- x", "- - y"], ["a: x", "- y"],
    ["- x"], ["a:", "b:"], ["a: |", "  text"], ["a: >", "  text"], ["a: &x 1", "b: *x"],
    ["a: !!int 3"], ["%YAML 1.1"], ["a: 1", "..."], ["? a", ": b"], ["a: 'x''y'"],
    ["  a: 1"], ["a: 1", " b: 2"], ["\ufeffa: 1"], ["a: 1\r"], ["<<: {a: 1}"], ["=: x"],
    ["a" * 70 + ": x"], ["k: " + "x" * 5000], ["k: " + "9" * 5000],
])
def test_tricky_documents(lines: list[str]) -> None:
    check(lines)


def test_random_documents_from_tricky_pieces() -> None:
    rng = random.Random(29)
    keys = ["id", "tags", "yes", "a", "a-b", "_x", "created", "no", "files"]
    pieces = ["a", "y", "n", "0", "1", "9", ":", " ", "#", "-", "_", ".", '"', "\\", "'", "[",
              "]", ",", "~", "T", "Z", "e", "x", "é", "\t", "2024-01-01", "T10:00:00", "+",
              "!", "&", "*", "{", "}", "@", "`", "|", ">", "%", "?", "/", "(", "null", "on"]
    for _ in range(4000):
        lines = []
        for _ in range(rng.randint(1, 5)):
            value = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
            key = rng.choice(keys)
            shape = rng.random()
            if shape < 0.6:
                lines.append(f"{key}: {value}")
            elif shape < 0.8:
                lines += [f"{key}:"] + [f"{rng.choice(['', '  '])}- {value}"
                                        for _ in range(rng.randint(0, 2))]
            else:
                lines.append(f"{key}: [{value}, {rng.choice(pieces)}]")
        check(lines)


def test_all_short_values_over_a_small_alphabet() -> None:
    """Every value of up to three characters from the characters that decide a plain
    scalar's type or end it, each as a value and as a list item."""
    alphabet = [*"019.:-+_exbTZnyo~#\"'\\[]a", " "]
    for size in (1, 2, 3):
        for chars in itertools.product(alphabet, repeat=size):
            value = "".join(chars)
            check(["key: " + value])
            check(["key:", "- " + value])


# --------------------------------------------------------------------------- the callers


def test_broken_frontmatter_messages_are_unchanged() -> None:
    cases = {
        "created: 2024-02-30": "created holds an impossible value (day is out of range for month)",
        "a: 1\na: 2": "duplicated frontmatter key 'a'",
        "a: [x": "malformed frontmatter (while parsing a flow sequence)",
        "- x": "frontmatter is not a mapping of keys to values",
        "importance: high": "importance must be a whole number from 1 to 10, not 'high'",
        "created: [2024-01-01]": "created must be a date such as 2024-02-28T10:00:00, not a list",
    }
    for text, message in cases.items():
        with pytest.raises(NoteFormatError) as err:
            Document.parse(f"---\n{text}\n---\nbody\n", "n.md")
        assert str(err.value) == f"n.md: {message}", text


def test_fast_and_slow_frontmatter_parse_alike() -> None:
    lines = ["id: x", "created: 2024-01-01T10:00:00", "tags:", "- a", "importance: 3"]
    fast = Frontmatter.parse(lines)
    slow = Frontmatter.parse(["# a comment makes it go through PyYAML", *lines])
    assert same(fast.data, slow.data) and fast.lines == lines
