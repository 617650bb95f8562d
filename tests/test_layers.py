"""The packages import one way, and no module imports itself back through others.

contract ← catalog (+ build.py); contract ← store ← accounts ← sync ← admin;
accounts ← edge; accounts ← webhooks ← admin. The store is what the edge, the sync and the
webhooks stand on; none of them opens its engine modules (store.engines). The edge
never imports the build (it reads dist/ through contract.shardformat) nor the sync worker;
nothing below admin imports admin. contract ← agents: the MCP server reads the API over HTTP.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "contract",
    "catalog",
    "store",
    "accounts",
    "sync",
    "edge",
    "webhooks",
    "admin",
    "agents",
)
# What each package may import besides itself.
ALLOWED: dict[str, frozenset[str]] = {
    "contract": frozenset(),
    "catalog": frozenset({"contract"}),
    "build": frozenset({"contract", "catalog"}),
    "store": frozenset({"contract"}),
    "accounts": frozenset({"contract", "store"}),
    "sync": frozenset({"contract", "store", "accounts"}),
    "edge": frozenset({"contract", "store", "accounts"}),
    # The delivery worker reads the store's events; the admin CLI sends its test events.
    "webhooks": frozenset({"contract", "store", "accounts"}),
    "admin": frozenset({"contract", "store", "accounts", "sync", "webhooks"}),
    # The MCP server talks to the edge over HTTP only: never the store, never dist/.
    "agents": frozenset({"contract"}),
}


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the project's packages, and build.py."""
    found = {"build": ROOT / "build.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path) -> set[str]:
    """Every project module `path` imports, wherever the import statement stands (those
    for type checkers only included)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in ALLOWED}


MODULES = modules()
GRAPH = {
    name: {m for m in imports_of(name, path) if m in MODULES} for name, path in MODULES.items()
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_follow_the_layers(name: str) -> None:
    own = name.split(".")[0]
    wrong = sorted(m for m in GRAPH[name] if m.split(".")[0] not in {own, *ALLOWED[own]})
    assert not wrong, f"{name} imports {wrong}, against the direction {own} -> {ALLOWED[own]}"


def test_no_import_cycles() -> None:
    """Between modules (a package's __init__ importing its own modules is not a cycle).
    An import for type checkers only counts too: two modules that need each other's
    names are one concern split in two, whether the import runs or not."""
    edges = {
        name: {m for m in targets if not name.startswith(m + ".") and not m.startswith(name + ".")}
        for name, targets in GRAPH.items()
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_layers_cover_every_package() -> None:
    """A new top-level package gets a place in ALLOWED before it can import anything."""
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert on_disk <= set(ALLOWED), sorted(on_disk - set(ALLOWED))


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.split(".")[0] != "store"))
def test_only_the_store_opens_its_engines(name: str) -> None:
    """Everything outside store/ goes through `store.open_store` and the two doors."""
    engines = sorted(m for m in GRAPH[name] if m.startswith("store.engines"))
    assert not engines, f"{name} imports {engines}: use store.open_store"
