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
