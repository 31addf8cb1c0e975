"""Writing ocm's entries into other tools' config files, and taking them out again.

Three kinds of edit, each reversible:

* JSON (`.mcp.json`, `.claude/settings.json`, `.cursor/hooks.json`, ...): parsed, our keys
  set or our list items appended, written back with the file's own indentation. A file
  that does not parse (JSONC comments, a syntax error) is never rewritten: the step is
  reported as skipped, with the snippet to add by hand.
* Text blocks (Markdown rule files, Codex's `config.toml`): our block is appended between
  sentinel lines, so comments and everything else stay byte for byte; TOML is validated
  with `tomllib` before it is written.
* Own files (`.cursor/rules/ocm.mdc`, `.github/hooks/ocm.json`): created whole, deleted on
  uninstall, never written over when someone else's file is already there.

A manifest remembers what each step did (whether the file existed, the exact text
inserted, the original bytes when they hold no secret) so `ocm uninstall` can put every
file back byte-identical; without a manifest it still removes exactly our entries.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocm.vault.atomic import open_new

MD_BEGIN = "<!-- ocm:begin (openCodeMemory; `ocm uninstall` removes this block) -->"
MD_END = "<!-- ocm:end -->"
TOML_BEGIN = "# >>> ocm: added by `ocm init`; `ocm uninstall` removes this block >>>"
TOML_END = "# <<< ocm <<<"
OWN_MARKER = "ocm-managed"

Pred = Callable[[Any], bool]


@dataclass
class SetKey:
    keys: tuple[str, ...]
    value: Any
    ours: Pred


@dataclass
class AppendItem:
    keys: tuple[str, ...]
    item: Any
    ours: Pred


@dataclass
class JsonStep:
    path: Path
    edits: Sequence[SetKey | AppendItem]
    what: str
    skeleton: dict[str, Any] = field(default_factory=dict)


@dataclass
class BlockStep:
    path: Path
    body: str
    what: str
    style: str = "markdown"   # markdown | toml
    conflict: Callable[[str], bool] | None = None   # True: the user already has it


def _has_marker(text: str) -> bool:
    return OWN_MARKER in text


@dataclass
class OwnFileStep:
    path: Path
    content: str
    what: str
    ours: Callable[[str], bool] = _has_marker   # is an existing file of that name ocm's?


Step = JsonStep | BlockStep | OwnFileStep


@dataclass
class Outcome:
    path: Path
    what: str
    action: str        # created | updated | unchanged | skipped | removed | restored | absent
    detail: str = ""


# --------------------------------------------------------------------------- helpers


BOM = "\ufeff"
# The exact text of every file read, by path: edits work on `_normal` text (no BOM, LF) and
# are written back in the file's own style; a restore writes these characters back.
_RAW: dict[Path, str] = {}


def _normal(text: str) -> str:
    return text.removeprefix(BOM).replace("\r\n", "\n")


def _read(path: Path) -> str | None:
    """The file's text without a BOM and with LF line ends (None if there is no file)."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    _RAW[path] = raw
    return _normal(raw)


def _raw(path: Path, text: str | None) -> str | None:
    """What `_read` returned `text` from, exactly (its BOM and line ends)."""
    raw = _RAW.get(path)
    return raw if raw is not None and text is not None and _normal(raw) == text else text


def _write(path: Path, text: str) -> None:
    """Write `text` in the style of the file it replaces (BOM, CRLF)."""
    before = _RAW.get(path)
    if before is not None:
        if "\r\n" in before:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        if before.startswith(BOM) and not text.startswith(BOM):
            text = BOM + text
    _write_exact(path, text)


def _write_exact(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = open_new(path.parent, path.name, prefix=f".{path.name[:80]}.ocm-tmp-")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    with contextlib.suppress(OSError):
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
    os.replace(tmp, path)


def _indent_of(text: str) -> int | str:
    m = re.search(r"^([ \t]+)\S", text, re.M)
    if not m:
        return 2
    return "\t" if m.group(1).startswith("\t") else len(m.group(1))


def dump_json(data: Any, like: str | None) -> str:
    indent = _indent_of(like) if like else 2
    out = json.dumps(data, indent=indent, ensure_ascii=False)
    return out + ("\n" if like is None or like.endswith("\n") else "")


def _has_secret(text: str) -> bool:
    try:
        from ocm.vault.secrets.redact import redact
    except Exception:  # noqa: BLE001 - without the redactor, never keep a copy
        return True
    return redact(text) != text


def _dig(data: dict[str, Any], keys: tuple[str, ...], create: bool) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            return None
        if key not in node:
            if not create:
                return None
            node[key] = {}
        node = node[key]
    return node


def _parent_and_leaf(data: dict[str, Any], keys: tuple[str, ...],
                     create: bool) -> tuple[dict[str, Any] | None, str]:
    parent = _dig(data, keys[:-1], create) if len(keys) > 1 else data
    return (parent if isinstance(parent, dict) else None), keys[-1]


def _prune(data: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Drop containers along `keys` that our removal left empty."""
    for depth in range(len(keys), 0, -1):
        parent, leaf = _parent_and_leaf(data, keys[:depth], create=False)
        if parent is None or leaf not in parent:
            continue
        if parent[leaf] in ({}, []):
            del parent[leaf]
        else:
            break


# --------------------------------------------------------------------------- apply


def apply(step: Step, manifest: dict[str, Any]) -> Outcome:
    if isinstance(step, JsonStep):
        return _apply_json(step, manifest)
    if isinstance(step, BlockStep):
        return _apply_block(step, manifest)
    return _apply_own(step, manifest)


def _remember(manifest: dict[str, Any], path: Path, original: str | None, **extra: Any) -> None:
    files = manifest.setdefault("files", {})
    key = str(path)
    if key in files:  # the first run's record of the original wins
        files[key].update({k: v for k, v in extra.items() if k not in files[key]})
        return
    entry: dict[str, Any] = {"existed": original is not None}
    if original is not None and not _has_secret(original):
        entry["original"] = _raw(path, original)  # the exact characters, BOM and CRLF
    entry.update(extra)
    files[key] = entry


def _apply_json(step: JsonStep, manifest: dict[str, Any]) -> Outcome:
    original = _read(step.path)
    if original is not None and original.strip():
        try:
            data = json.loads(original)
        except ValueError:
            snippet = json.dumps(_snippet(step), indent=2)
            return Outcome(step.path, step.what, "skipped",
                           "not plain JSON (comments?); add by hand:\n" + snippet)
        if not isinstance(data, dict):
            return Outcome(step.path, step.what, "skipped", "top level is not an object")
    else:
        data = json.loads(json.dumps(step.skeleton))
    before = json.dumps(data, sort_keys=True)
    for edit in step.edits:
        if isinstance(edit, SetKey):
            parent, leaf = _parent_and_leaf(data, edit.keys, create=True)
            if parent is None:
                return Outcome(step.path, step.what, "skipped",
                               f"{'.'.join(edit.keys[:-1])} is not an object")
            current = parent.get(leaf)
            if current is not None and current != edit.value and not edit.ours(current):
                return Outcome(step.path, step.what, "skipped",
                               f"{'.'.join(edit.keys)} already exists and is not ocm's")
            parent[leaf] = edit.value
        else:
            target = _dig(data, edit.keys[:-1], create=True) if len(edit.keys) > 1 else data
            if not isinstance(target, dict):
                return Outcome(step.path, step.what, "skipped", "unexpected structure")
            items = target.setdefault(edit.keys[-1], [])
            if not isinstance(items, list):
                return Outcome(step.path, step.what, "skipped",
                               f"{'.'.join(edit.keys)} is not a list")
            if edit.item in items:
                continue
            # An older ocm entry for the same event is replaced, not duplicated.
            kept = [x for x in items if not edit.ours(x)]
            target[edit.keys[-1]] = kept + [edit.item]
    if json.dumps(data, sort_keys=True) == before and original is not None:
        return Outcome(step.path, step.what, "unchanged")
    _remember(manifest, step.path, original)
    _write(step.path, dump_json(data, original if original and original.strip() else None))
    return Outcome(step.path, step.what, "created" if original is None else "updated")


def _snippet(step: JsonStep) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for edit in step.edits:
        if isinstance(edit, SetKey):
            parent, leaf = _parent_and_leaf(out, edit.keys, create=True)
            if parent is not None:
                parent[leaf] = edit.value
        else:
            target = _dig(out, edit.keys[:-1], create=True) if len(edit.keys) > 1 else out
            target.setdefault(edit.keys[-1], []).append(edit.item)
    return out


def _block_text(step: BlockStep) -> str:
    begin, end = (MD_BEGIN, MD_END) if step.style == "markdown" else (TOML_BEGIN, TOML_END)
    return f"{begin}\n{step.body.strip()}\n{end}\n"


def _find_block(text: str, style: str) -> tuple[int, int] | None:
    begin, end = (MD_BEGIN, MD_END) if style == "markdown" else (TOML_BEGIN, TOML_END)
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        return None
    stop += len(end)
    if text[stop:stop + 1] == "\n":
        stop += 1
    return start, stop


def _apply_block(step: BlockStep, manifest: dict[str, Any]) -> Outcome:
    original = _read(step.path)
    text = original or ""
    block = _block_text(step)
    found = _find_block(text, step.style)
    if found is not None:
        if text[found[0]:found[1]] == block:
            return Outcome(step.path, step.what, "unchanged")
        new = text[:found[0]] + block + text[found[1]:]
        inserted = None
    else:
        if step.conflict is not None and step.conflict(text):
            return Outcome(step.path, step.what, "skipped",
                           "an ocm entry written by hand is already there")
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        inserted = sep + block
        new = text + inserted
    if step.style == "toml":
        try:
            tomllib.loads(new)
        except tomllib.TOMLDecodeError as exc:
            return Outcome(step.path, step.what, "skipped", f"would not be valid TOML: {exc}")
    if inserted is not None:
        _remember(manifest, step.path, original, inserted=inserted)
    _write(step.path, new)
    return Outcome(step.path, step.what, "created" if original is None else "updated")


def _apply_own(step: OwnFileStep, manifest: dict[str, Any]) -> Outcome:
    original = _read(step.path)
    if original is not None and not step.ours(original):
        return Outcome(step.path, step.what, "skipped", "a file of that name is not ocm's")
    if original == step.content:
        return Outcome(step.path, step.what, "unchanged")
    _remember(manifest, step.path, None, own=True)
    _write(step.path, step.content)
    return Outcome(step.path, step.what, "created" if original is None else "updated")


# --------------------------------------------------------------------------- remove


def remove(step: Step, manifest: dict[str, Any]) -> Outcome:
    record = manifest.get("files", {}).get(str(step.path), {})
    if isinstance(step, JsonStep):
        return _remove_json(step, record)
    if isinstance(step, BlockStep):
        return _remove_block(step, record)
    return _remove_own(step)


def _finish(step: Step, record: dict[str, Any], new: Any, text: str) -> Outcome:
    """Write the cleaned file: the original bytes when nothing else changed since."""
    original = record.get("original")
    if isinstance(original, str):
        try:
            same = json.loads(_normal(original)) == new if isinstance(step, JsonStep) else (
                _normal(original) == new)
        except ValueError:
            same = False
        if same:
            _write_exact(step.path, original)
            return Outcome(step.path, step.what, "restored")
    _write(step.path, text)
    return Outcome(step.path, step.what, "removed")


def _delete_file(path: Path) -> None:
    path.unlink()
    folder = path.parent
    for _ in range(2):  # `.cursor/rules`, `.github/hooks`: only folders left empty
        try:
            folder.rmdir()
        except OSError:
            break
        folder = folder.parent


def _strip(step: JsonStep, data: dict[str, Any], prune: bool) -> None:
    for edit in step.edits:
        if isinstance(edit, SetKey):
            parent, leaf = _parent_and_leaf(data, edit.keys, create=False)
            if parent is not None and leaf in parent and (
                    parent[leaf] == edit.value or edit.ours(parent[leaf])):
                del parent[leaf]
                if prune:
                    _prune(data, edit.keys[:-1])
        else:
            target = _dig(data, edit.keys[:-1], create=False) if len(edit.keys) > 1 else data
            if isinstance(target, dict) and isinstance(target.get(edit.keys[-1]), list):
                target[edit.keys[-1]] = [x for x in target[edit.keys[-1]]
                                         if x != edit.item and not edit.ours(x)]
                if prune:
                    _prune(data, edit.keys)


def _remove_json(step: JsonStep, record: dict[str, Any]) -> Outcome:
    text = _read(step.path)
    if text is None:
        return Outcome(step.path, step.what, "absent")
    try:
        data = json.loads(text)
    except ValueError:
        return Outcome(step.path, step.what, "skipped", "not plain JSON; remove ocm by hand")
    if not isinstance(data, dict):
        return Outcome(step.path, step.what, "skipped", "top level is not an object")
    before = json.dumps(data, sort_keys=True)
    kept = json.loads(text)
    _strip(step, kept, prune=False)   # containers left as they are (they may predate ocm)
    _strip(step, data, prune=True)    # containers ocm's entries leave empty dropped
    if json.dumps(data, sort_keys=True) == before:
        return Outcome(step.path, step.what, "unchanged", "no ocm entries")
    if record and not record.get("existed") and (not data or data == step.skeleton):
        _delete_file(step.path)
        return Outcome(step.path, step.what, "removed", "file deleted (ocm created it)")
    original = record.get("original")
    if isinstance(original, str):
        try:
            if json.loads(_normal(original)) in (kept, data):
                _write_exact(step.path, original)
                return Outcome(step.path, step.what, "restored")
        except ValueError:
            pass
    return _finish(step, {}, data, dump_json(data, text))


def _remove_block(step: BlockStep, record: dict[str, Any]) -> Outcome:
    text = _read(step.path)
    if text is None:
        return Outcome(step.path, step.what, "absent")
    inserted = record.get("inserted")
    if isinstance(inserted, str) and text.count(inserted) == 1:
        new = text.replace(inserted, "")
    else:
        found = _find_block(text, step.style)
        if found is None:
            return Outcome(step.path, step.what, "unchanged", "no ocm block")
        new = text[:found[0]] + text[found[1]:]
    if record and not record.get("existed") and not new.strip():
        _delete_file(step.path)
        return Outcome(step.path, step.what, "removed", "file deleted (ocm created it)")
    return _finish(step, record, new, new)


def _remove_own(step: OwnFileStep) -> Outcome:
    text = _read(step.path)
    if text is None:
        return Outcome(step.path, step.what, "absent")
    if not step.ours(text):
        return Outcome(step.path, step.what, "skipped", "not ocm's file")
    _delete_file(step.path)
    return Outcome(step.path, step.what, "removed")


# --------------------------------------------------------------------------- check


def check(step: Step) -> tuple[bool, str]:
    """(wired, problem) for `ocm doctor`."""
    text = _read(step.path)
    if text is None:
        return False, f"{step.path} does not exist"
    if isinstance(step, BlockStep):
        return (_find_block(text, step.style) is not None,
                "" if _find_block(text, step.style) else "no ocm block")
    if isinstance(step, OwnFileStep):
        return (text == step.content, "" if text == step.content else "out of date")
    try:
        data = json.loads(text)
    except ValueError:
        return False, "not plain JSON"
    for edit in step.edits:
        if isinstance(edit, SetKey):
            parent, leaf = _parent_and_leaf(data, edit.keys, create=False)
            if parent is None or parent.get(leaf) != edit.value:
                return False, f"{'.'.join(edit.keys)} missing or different"
        else:
            target = _dig(data, edit.keys, create=False)
            if not isinstance(target, list) or edit.item not in target:
                return False, f"{'.'.join(edit.keys)}: ocm entry missing or different"
    return True, ""


def load_manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def save_manifest(path: Path, manifest: dict[str, Any]) -> None:
    if not manifest.get("files"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    _write(path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)
