"""Three-way merge of one note for git (`ocm merge-note %O %A %B`, registered by `ocm init
--team`): what two people's ocm wrote to one note merges without a person.

* Frontmatter is merged key by key, never line by line (git's `union` driver would keep both
  sides' `status:` lines, a duplicated key the note can no longer be read with). A key one
  side changed takes that side's value; a key both changed takes the newer side's (`updated`,
  else `ended_at`, `created`, `started_at`, each by its true instant: the `_utc` twin where
  the note has one, so two people in different time zones merge in the order they wrote; a
  tie is broken by the values themselves, so the answer does not depend on which side
  merges). Lists (`tags`, `files`) merge as sets (what either side removed goes, what either
  added stays); `updated` takes the later instant, its `updated_utc` from the same side;
  activity counters add both sides' increments; a session's status takes the furthest
  (open < frozen < closed); a memory's lifecycle (`status`, `superseded_by`, `resolution`)
  moves as one unit from the side that changed it, or from the newer side if both did.
* The body is merged by git's own three-way line merge; where both sides changed the same
  lines (typically both appended bullets at a section's end) both sides' lines are kept
  (`git merge-file --union`), and a bullet both sides added is kept once.

A side that cannot be parsed (broken YAML, conflict markers a person left) is not guessed
at: the result is git's ordinary merge with conflict markers, and the caller reports a
conflict (`ocm doctor` then names the note and `ocm team resolve` once it is fixed).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..clock import NEVER, instant
from ..errors import NoteFormatError
from ..markdown import Frontmatter, normalise_heading
from ..memories import FRONTMATTER_ORDER as MEMORY_ORDER
from ..secrets.redact import redact
from ..sessions import FRONTMATTER_ORDER as SESSION_ORDER

LIFECYCLE = ("status", "superseded_by", "resolution")
COUNTERS = ("reads", "edits")
SESSION_STATUS_RANK = {"open": 0, "frozen": 1, "closed": 2}
_STAMPS = ("updated", "ended_at", "created", "started_at")  # each with its `_utc` twin, if any
_MISSING = object()
CONFLICT_MARKERS = ("<<<<<<< ", ">>>>>>> ")


@dataclass
class MergeResult:
    text: str
    conflicts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.text = redact(self.text)  # every write path: a side a person typed a key into

    @property
    def clean(self) -> bool:
        return not self.conflicts


@dataclass
class _Parts:
    bom: bool
    newline: str
    frontmatter: Frontmatter | None
    body: str


def _split(text: str, where: str) -> _Parts:
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[0].rstrip() == "---":
        for index in range(1, len(lines)):
            if lines[index].rstrip() in ("---", "..."):
                fm = Frontmatter.parse(lines[1:index], where)
                return _Parts(bom, newline, fm, "\n".join(lines[index + 1:]))
        raise NoteFormatError(where, "frontmatter starts with '---' but never ends")
    return _Parts(bom, newline, None, text)


def has_conflict_markers(text: str) -> bool:
    lines = text.splitlines()
    return any(line.startswith("<<<<<<< ") for line in lines) and any(
        line.startswith(">>>>>>> ") for line in lines)


def merge_note(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge two versions of a note that both started from `base` ('' when both sides
    added the file)."""
    if ours == theirs or theirs == base:
        return MergeResult(ours)
    if ours == base:
        return MergeResult(theirs)
    try:
        if has_conflict_markers(ours) or has_conflict_markers(theirs):
            raise NoteFormatError("note", "holds conflict markers")
        b, o, t = _split(base, "base"), _split(ours, "ours"), _split(theirs, "theirs")
    except NoteFormatError as exc:
        text, _ = line_merge(base, ours, theirs, union=False)
        return MergeResult(text, [f"cannot merge by fields: {exc.problem}"])
    body = _merge_body(b.body, o.body, t.body)
    if o.frontmatter is None and t.frontmatter is None:
        text = body
    else:
        fm = _merge_frontmatter(b.frontmatter, o.frontmatter or Frontmatter([], {}),
                                t.frontmatter or Frontmatter([], {}))
        text = "\n".join(["---", *fm.lines, "---", body])
    if o.newline != "\n":
        text = text.replace("\n", o.newline)
    return MergeResult(("\ufeff" if o.bom else "") + text)


# --------------------------------------------------------------------------- frontmatter


def _stamp(data: dict[str, Any], keys: tuple[str, ...] = _STAMPS) -> datetime:
    """The true instant of the first of `keys` a side holds (aware), else the earliest."""
    for key in keys:
        found = instant(data.get(f"{key}_utc"), data.get(key))
        if found is not None:
            return found
    return NEVER


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _theirs_newer(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    mine, yours = _stamp(ours), _stamp(theirs)
    if mine != yours:
        return yours > mine
    return _canonical(theirs) > _canonical(ours)


def _merge_list(base: Any, ours: list, theirs: list) -> list:
    before = base if isinstance(base, list) else []
    kept = [x for x in ours if not (x in before and x not in theirs)]
    return kept + [x for x in theirs if x not in ours and x not in before]


def _merge_value(key: str, base: Any, ours: Any, theirs: Any, theirs_newer: bool,
                 theirs_updated_later: bool | None) -> Any:
    if key in ("updated", "updated_utc") and theirs_updated_later is not None:
        return theirs if theirs_updated_later else ours
    if key in COUNTERS and all(isinstance(v, int) and not isinstance(v, bool)
                               for v in (ours, theirs)):
        start = base if isinstance(base, int) and not isinstance(base, bool) else 0
        return ours + theirs - start
    if key == "status" and ours in SESSION_STATUS_RANK and theirs in SESSION_STATUS_RANK:
        return max(ours, theirs, key=SESSION_STATUS_RANK.__getitem__)
    if isinstance(ours, list) and isinstance(theirs, list):
        return _merge_list(base, ours, theirs)
    return theirs if theirs_newer else ours


def _changed(side: dict[str, Any], base: dict[str, Any], key: str) -> bool:
    return side.get(key, _MISSING) != base.get(key, _MISSING)


def _merge_frontmatter(base: Frontmatter | None, ours: Frontmatter,
                       theirs: Frontmatter) -> Frontmatter:
    bd, od, td = (base.data if base else {}), ours.data, theirs.data
    is_memory = "type" in od or "type" in td
    order = MEMORY_ORDER if is_memory else SESSION_ORDER
    newer = _theirs_newer(od, td)
    # `updated` and its twin come from the side that changed later (None: neither says when)
    ours_at, theirs_at = _stamp(od, ("updated",)), _stamp(td, ("updated",))
    updated_later = None if ours_at == theirs_at == NEVER else theirs_at >= ours_at
    stamped_twice = _changed(od, bd, "updated") and _changed(td, bd, "updated")
    out = Frontmatter(list(ours.lines), dict(od))

    lifecycle_from = None
    if is_memory:
        mine = any(_changed(od, bd, k) for k in LIFECYCLE)
        yours = any(_changed(td, bd, k) for k in LIFECYCLE)
        if mine and yours:
            lifecycle_from = td if newer else od
        elif yours:
            lifecycle_from = td
    for key in list(od) + [k for k in td if k not in od]:
        o, t, b = od.get(key, _MISSING), td.get(key, _MISSING), bd.get(key, _MISSING)
        if lifecycle_from is not None and key in LIFECYCLE:
            value = lifecycle_from.get(key, _MISSING)
        elif key == "updated_utc" and stamped_twice and updated_later is not None:
            # the twin of the `updated` kept, even from a side written before twins existed
            value = (td if updated_later else od).get(key, _MISSING)
        elif o == t or t == b:
            continue
        elif o == b:
            value = t
        elif o is _MISSING or t is _MISSING:
            value = t if newer else o  # one side dropped the key, the other changed it
        else:
            value = _merge_value(key, b, o, t, newer, updated_later)
        if value is _MISSING:
            out.delete(key)
        elif value != o or key not in od:
            out.set(key, value, order)
    for line in theirs.lines:  # comments a person added on the other side
        if line.lstrip().startswith("#") and line not in out.lines and (
                base is None or line not in base.lines):
            out.lines.append(line)
    return out


# --------------------------------------------------------------------------- body


def line_merge(base: str, ours: str, theirs: str, union: bool) -> tuple[str, bool]:
    """git's three-way line merge; `union` keeps both sides of each conflicting hunk.
    Returns (text, clean)."""
    with tempfile.TemporaryDirectory(prefix="ocm-merge-") as tmp:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            names.append(path)
        args = ["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs"]
        out = subprocess.run([*args, *(["--union"] if union else []), *names],
                             capture_output=True, check=False)
    if out.returncode < 0 or out.returncode > 127:
        raise OSError(f"git merge-file failed: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout.decode("utf-8", errors="surrogateescape"), out.returncode == 0


def _merge_body(base: str, ours: str, theirs: str) -> str:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    text, _ = line_merge(base, ours, theirs, union=True)
    return _drop_new_repeats(text, ours, theirs)


def _bullets_by_section(text: str) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    section = ""
    for line in text.split("\n"):
        if line.startswith("#"):
            section = normalise_heading(line.lstrip("#"))
        elif line.startswith(("- ", "* ")):
            counts[(section, line.rstrip())] = counts.get((section, line.rstrip()), 0) + 1
    return counts


def _drop_new_repeats(merged: str, ours: str, theirs: str) -> str:
    """A bullet both sides appended comes out of the union twice: keep it once (a bullet
    that was already repeated in one side stays as often as it was there)."""
    allowed = _bullets_by_section(ours)
    for key, count in _bullets_by_section(theirs).items():
        allowed[key] = max(allowed.get(key, 0), count)
    seen: dict[tuple[str, str], int] = {}
    out: list[str] = []
    section = ""
    for line in merged.split("\n"):
        if line.startswith("#"):
            section = normalise_heading(line.lstrip("#"))
        elif line.startswith(("- ", "* ")):
            key = (section, line.rstrip())
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > allowed.get(key, 1):
                continue
        out.append(line)
    return "\n".join(out)


# --------------------------------------------------------------------------- after the fact


def sides_from_markers(text: str) -> tuple[str, str, str]:
    """(base, ours, theirs) of a file git left with conflict markers (`diff3` style keeps
    the base between `|||||||` and `=======`; without it a hunk's base is empty)."""
    sides: tuple[list[str], list[str], list[str]] = ([], [], [])
    state = "common"
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare.startswith("<<<<<<<") and state == "common":
            state = "ours"
        elif bare.startswith("|||||||") and state == "ours":
            state = "base"
        elif bare == "=======" and state in ("ours", "base"):
            state = "theirs"
        elif bare.startswith(">>>>>>>") and state == "theirs":
            state = "common"
        elif state == "common":
            for side in sides:
                side.append(line)
        else:
            sides[{"base": 0, "ours": 1, "theirs": 2}[state]].append(line)
    base, ours, theirs = ("".join(side) for side in sides)
    return base, ours, theirs


def resolve_file(path: os.PathLike[str] | str, repo_root: os.PathLike[str] | str) -> MergeResult:
    """Merge a note git left conflicted: from git's stages when the merge is still going
    (the exact three versions), else from the markers in the file. Writes the file only
    when the merge is clean, and then marks it resolved in git (`git add`)."""
    from pathlib import Path

    from ..atomic import atomic_write_text

    target, root = Path(path).resolve(), Path(repo_root).resolve()
    rel = target.relative_to(root).as_posix()
    stages = {}
    for stage in (1, 2, 3):
        out = subprocess.run(["git", "show", f":{stage}:{rel}"], cwd=root, capture_output=True,
                             check=False)
        if out.returncode == 0:
            stages[stage] = out.stdout.decode("utf-8")
    if 2 in stages and 3 in stages:
        base, ours, theirs = stages.get(1, ""), stages[2], stages[3]
    else:
        base, ours, theirs = sides_from_markers(target.read_text(encoding="utf-8"))
    result = merge_note(base, ours, theirs)
    if result.clean:
        atomic_write_text(target, result.text)
        if stages:
            subprocess.run(["git", "add", "--", rel], cwd=root, capture_output=True,
                           check=False)
    return result


def conflicted_notes(vault_root: os.PathLike[str] | str,
                     note_paths: list[os.PathLike[str]] | None = None) -> list[str]:
    """Vault-relative paths of the notes holding git conflict markers, and of the notes
    git's index holds unmerged (a merge driver that died leaves no markers)."""
    from pathlib import Path

    root = Path(vault_root)
    found = unmerged_in_git(root)
    for path in note_paths if note_paths is not None else []:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "\n=======" in text and has_conflict_markers(text):
            found.append(Path(path).relative_to(root).as_posix())
    return sorted(set(found))


def unmerged_in_git(vault_root: os.PathLike[str] | str) -> list[str]:
    """Vault-relative paths of the notes git's index holds unmerged ([] outside git)."""
    try:
        out = subprocess.run(["git", "ls-files", "-u", "-z", "--", "."], cwd=vault_root,
                             capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    names = {entry.split(b"\t", 1)[1].decode("utf-8", "surrogateescape")
             for entry in out.stdout.split(b"\0") if b"\t" in entry}
    return [name for name in names if name.endswith(".md")]
