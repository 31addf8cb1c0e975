"""Layering (/work/shared/DESIGN.md, "one direction of dependency"): `ocm.vault` imports
nothing else of ours; `ocm.indexer` reads the vault and nothing above it. Every import
counts, those inside functions and under TYPE_CHECKING included."""

from __future__ import annotations

import ast
from pathlib import Path

import ocm

PACKAGE = Path(ocm.__file__).parent
ABOVE_INDEXER = ("ocm.project", "ocm.cli", "ocm.mcp_server", "ocm.agents", "ocm.hook",
                 "ocm.importers")
FORBIDDEN = {"vault": ("ocm.indexer", *ABOVE_INDEXER), "indexer": ABOVE_INDEXER}


def imported_modules(path: Path, package_dir: Path) -> set[str]:
    """Every `ocm...` name `path` (a module under `package_dir`, the `ocm` folder) imports,
    relative imports resolved: `from .x import y` gives `ocm.<pkg>.x` and `ocm.<pkg>.x.y`."""
    package = ["ocm", *path.relative_to(package_dir).parent.parts]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return {name for name in found if name == "ocm" or name.startswith("ocm.")}


def violations(package_dir: Path, layer: str) -> list[str]:
    return sorted(
        f"{path.relative_to(package_dir.parent)} imports {name}"
        for path in (package_dir / layer).rglob("*.py")
        for name in imported_modules(path, package_dir)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[layer]))


def test_a_wrong_import_is_found(tmp_path: Path) -> None:
    """The checks below would pass on nothing if imports were misread: relative ones at
    any depth, absolute ones, inside functions."""
    package_dir = tmp_path / "ocm"
    (package_dir / "vault" / "alike").mkdir(parents=True)
    (package_dir / "indexer").mkdir()
    (package_dir / "vault" / "alike" / "deep.py").write_text(
        "from ...indexer.search import Hit\nfrom ..store import Vault\n", encoding="utf-8")
    (package_dir / "vault" / "lazy.py").write_text(
        "def f():\n    import ocm.cli.main\n    from . import store\n", encoding="utf-8")
    (package_dir / "indexer" / "up.py").write_text(
        "from ocm import project\nfrom ..vault.store import Vault\n", encoding="utf-8")
    assert violations(package_dir, "vault") == [
        "ocm/vault/alike/deep.py imports ocm.indexer.search",
        "ocm/vault/alike/deep.py imports ocm.indexer.search.Hit",
        "ocm/vault/lazy.py imports ocm.cli.main",
    ]
    assert violations(package_dir, "indexer") == ["ocm/indexer/up.py imports ocm.project"]


def test_vault_imports_no_other_layer() -> None:
    assert violations(PACKAGE, "vault") == []


def test_indexer_imports_nothing_above_it() -> None:
    assert violations(PACKAGE, "indexer") == []


def module_name(path: Path, package_dir: Path) -> str:
    parts = ["ocm", *path.relative_to(package_dir).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (an imported name is resolved to the longest
    prefix that is a module: `ocm.vault.store.Vault` -> `ocm.vault.store`). A module's own
    packages are left out: `from . import sibling` runs the package's `__init__`, which is
    how a package names its public parts, not a circle."""
    paths = {module_name(p, package_dir): p for p in package_dir.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets = set()
        for imported in imported_modules(path, package_dir):
            parts = imported.split(".")
            while parts and ".".join(parts) not in paths:
                parts.pop()
            target = ".".join(parts)
            if parts and target != name and not name.startswith(target + "."):
                targets.add(target)
        graph[name] = targets
    return graph


def circles(package_dir: Path) -> list[list[str]]:
    """Each group of modules that import each other, directly or through others (the
    strongly connected components of the import graph with more than one module)."""
    graph = import_graph(package_dir)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return sorted(found)


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    """Two modules importing each other (one lazily, inside a function), and a longer ring of
    three, are each reported; a package's `__init__` and a one-way import are not."""
    package_dir = tmp_path / "ocm"
    (package_dir / "vault" / "alike").mkdir(parents=True)
    (package_dir / "agents").mkdir()
    (package_dir / "vault" / "__init__.py").write_text("", encoding="utf-8")
    (package_dir / "vault" / "store.py").write_text(
        "from .alike.near import judge\nfrom . import ids\n", encoding="utf-8")
    (package_dir / "vault" / "ids.py").write_text("import ocm.vault\n", encoding="utf-8")
    (package_dir / "vault" / "alike" / "near.py").write_text(
        "def judge():\n    from ..store import Vault\n", encoding="utf-8")
    (package_dir / "agents" / "a.py").write_text("from .b import x\n", encoding="utf-8")
    (package_dir / "agents" / "b.py").write_text("from ocm.agents import c\n", encoding="utf-8")
    (package_dir / "agents" / "c.py").write_text("from . import a\n", encoding="utf-8")
    (package_dir / "agents" / "nudge").mkdir()
    (package_dir / "agents" / "nudge" / "__init__.py").write_text(
        "from .decide import at_stop\n", encoding="utf-8")
    (package_dir / "agents" / "nudge" / "decide.py").write_text(
        "from . import message\n", encoding="utf-8")
    (package_dir / "agents" / "nudge" / "message.py").write_text("", encoding="utf-8")
    assert circles(package_dir) == [["ocm.agents.a", "ocm.agents.b", "ocm.agents.c"],
                                    ["ocm.vault.alike.near", "ocm.vault.store"]]


def test_no_module_imports_itself_through_others() -> None:
    assert circles(PACKAGE) == []
