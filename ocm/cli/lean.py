"""The `ocm` console script. `ocm search` with arguments this parser fully understands runs
here, through the same code as the click command (ocm/cli/searching.py), without importing
click, mcp or GitPython (rich only for a table): in a fresh process the imports cost more
than the search (bench/README.md). Everything else goes to the click app unchanged: other
commands, help, an option or value this parser is not sure of, and every error the search
raises (click runs it again and says it, exactly as it always has)."""

from __future__ import annotations

import gc
import os
import stat
import sys
from pathlib import Path

TYPE_CHECKING = False  # (typing is imported after the search's `find` has started)
if TYPE_CHECKING:
    from typing import Any

# `ocm search` options as click declares them (tests/test_lean_cli.py checks they agree).
VALUED = {"--vault": "vault", "--limit": "limit", "--kind": "kind", "--type": "types",
          "--status": "status", "--tool": "tool", "--since": "since", "--until": "until",
          "--file": "file_", "--tag": "tag", "--scope": "scope", "--author": "author"}
FLAGS = {"--json": "as_json", "--include-resolved": "include_resolved",
         "--explain": "explain", "--chunks": "chunks"}
# Set when a shell asks click for completions.
COMPLETION_VARIABLE = "_OCM_COMPLETE"


def _whole_number(value: str) -> bool:
    digits = value[1:] if value[:1] == "-" else value
    return digits.isascii() and digits.isdigit()


def _plain_folder(value: str) -> bool:
    """What click.Path(file_okay=False) accepts without a word: a missing path or a readable
    folder (it refuses a file and an unreadable path)."""
    try:
        found = os.stat(value)
    except (OSError, ValueError):
        return True
    return stat.S_ISDIR(found.st_mode) and os.access(value, os.R_OK)


def parse_search(args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of `searching.run` for `ocm search ARGS`, parsed the way click
    parses them; None for anything click should see (help, an unknown option, a value it
    would refuse or convert, no query)."""
    found = _read_search(args)
    return None if found is None else _checked_search(found)


def _read_search(args: list[str]) -> dict[str, Any] | None:
    """`parse_search`'s reading of ARGS into options and query, none of their values
    checked yet (this imports nothing); None for what click should see."""
    found: dict[str, Any] = {}
    query: list[str] = []
    types: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            query.extend(rest)
            break
        if arg[:1] != "-" or arg == "-":
            query.append(arg)
            continue
        name, equals, value = arg.partition("=")
        if name in FLAGS and not equals:
            found[FLAGS[name]] = True
            continue
        key = VALUED.get(name)
        if key is None:
            return None
        if not equals:
            following = next(rest, None)
            if following is None:
                return None
            value = following
        if key == "types":
            types.append(value)
        else:
            found[key] = value
    if not query:
        return None
    return {**found, "query": tuple(query), "types": tuple(types)}


def _checked_search(found: dict[str, Any]) -> dict[str, Any] | None:
    """`parse_search`'s check of the values `_read_search` found."""
    from ocm.project import KINDS, SEARCH_SCOPES

    if "limit" in found:
        if not _whole_number(found["limit"]):
            return None
        found["limit"] = int(found["limit"])
    if found.get("kind", KINDS[0]) not in KINDS:
        return None
    if found.get("scope", SEARCH_SCOPES[0]) not in SEARCH_SCOPES:
        return None
    if "vault" in found:
        if not _plain_folder(found["vault"]):
            return None
        found["vault"] = Path(found["vault"])
    return found


def _search(kwargs: dict[str, Any]) -> object | None:
    """Run the search: the project it searched (`searching.run`), None when it raised an
    error for click to report."""
    from ocm.vault.errors import OcmError

    from . import searching

    try:
        searched = searching.run(**kwargs)
        sys.stdout.flush()
    except (OcmError, OSError):  # reported by click in one line (a full disk)
        return None
    except KeyboardInterrupt:  # as click reports an interrupt
        sys.stderr.write("\nerror: aborted\n")
        sys.exit(1)
    except BrokenPipeError:  # as click: quietly, exit code 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    return searched


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["search"] and not os.environ.get(COMPLETION_VARIABLE):
        # One search, then the process exits: the cyclic garbage collector would only
        # re-traverse what the imports and the search build (~110 collections, 25-55 ms
        # of a search at 10k notes) to free memory that the exit frees anyway.
        gc.disable()
        # numpy's OpenBLAS starts a pool of threads when it loads (~25 ms of CPU, ~30 % of
        # numpy's import) that a search never uses: each product it makes is below the
        # size at which OpenBLAS spreads one over threads (vectors.PRODUCT_ROWS), so the
        # floats are the same. A value the user set is kept.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from ocm.vault.freshness import scanahead

        from . import searching

        # What the search can start before it imports (the index's files read in full,
        # the freshness scan): started on the vault it names before its values are
        # checked, which imports most of what the search needs.
        found = _read_search(args[1:])
        location = None if found is None else searching.located(found.get("vault"))
        try:
            kwargs = None if found is None else _checked_search(found)
            # (The project searched is kept to the exit: see exiting.py.)
            searched = None if kwargs is None else _search({**kwargs, "location": location})
        finally:  # a listing the search did not take (click runs it again)
            if location is not None:
                scanahead.discard(str(location[0]))
        if searched is not None:
            from .exiting import exit_done

            exit_done()
        gc.enable()
    from .main import main as click_main

    click_main()


if __name__ == "__main__":
    main()
