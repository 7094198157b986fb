"""The direction of use, kept by a test: every import in the service points down a layer, and none closes a cycle.

The house (docs/architecture.md): the foundations (`errors`, `metrics`, the generated `v1`) ← `config` ← `runner`,
`security` ← the domain (`workspace`, `verify` ← `evaluators` ← `judges`) ← `rpc` ← `server` ← `cli`. Every import is
read from the source, those under `if TYPE_CHECKING:` and inside functions included, since a deferred import is still
a use. Packages of the same rank (the runner and security, say) may not use each other either.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVICE = Path(__file__).resolve().parents[1] / "service"

RANKS = {
    "verdict": 0,
    "verdict.errors": 0,
    "verdict.handoff": 0,
    "verdict.metrics": 0,
    "verdict.patterns": 0,
    "verdict.records": 0,
    "verdict.v1": 0,
    "verdict.waiting": 0,
    "verdict.config": 1,
    "verdict.runner": 2,
    "verdict.security": 2,
    "verdict.workspace": 3,
    "verdict.verify": 3,
    "verdict.evaluators": 4,
    "verdict.judges": 5,
    "verdict.rpc": 6,
    "verdict.server": 7,
    "verdict.cli": 8,
    "verdict.__main__": 9,
}
"""Each top-level room of `verdict` and its layer: a module may use only rooms of a lower rank, and its own room."""


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room(module: str) -> str:
    """The top-level room a module belongs to (`verdict.rpc.context` → `verdict.rpc`)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def imports(path: Path, name: str, known: set[str]) -> Iterator[tuple[str, int]]:
    """Every `verdict` module `path` imports, anywhere in the file, with its line."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield (candidate if candidate in known else base), node.lineno


def graph(root: Path) -> dict[str, dict[str, int]]:
    """Module → the verdict modules it imports (and the first line that does), generated stubs left out."""
    files = {module_name(path, root): path for path in sorted((root / "verdict").rglob("*.py"))}
    known = set(files)
    edges: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        if name.startswith("verdict.v1"):
            continue
        targets: dict[str, int] = {}
        for target, line in imports(path, name, known):
            if (target == "verdict" or target.startswith("verdict.")) and target != name:
                targets.setdefault(target, line)
        edges[name] = targets
    return edges


def upward(edges: dict[str, dict[str, int]]) -> list[str]:
    """Imports that point at a room of the same or a higher rank than the importer's own room."""
    found = []
    for source, targets in edges.items():
        own = room(source)
        for target, line in targets.items():
            other = room(target)
            if other == own or target == "verdict":
                continue
            if other not in RANKS or own not in RANKS:
                found.append(f"{source}:{line} imports {target}: a room the layer map does not know")
            elif RANKS[other] >= RANKS[own]:
                found.append(f"{source}:{line} imports {target} (rank {RANKS[other]} from rank {RANKS[own]})")
    return found


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, {}):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_room_of_the_package_has_a_rank() -> None:
    rooms = {room(name) for name in graph(SERVICE)}
    assert rooms <= set(RANKS), f"rooms without a layer: {sorted(rooms - set(RANKS))}"


def test_every_import_points_down_a_layer() -> None:
    assert upward(graph(SERVICE)) == []


def test_no_import_closes_a_cycle() -> None:
    assert cycles(graph(SERVICE)) == []


def _plant(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "verdict" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    "planted",
    [
        "from verdict.rpc import servicer\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from verdict.server.assembly import App\n",
        "def later() -> None:\n    import verdict.cli.main\n",
        "from verdict.security import gate\n",
    ],
    ids=["module-level", "type-checking", "function-local", "same-rank sibling"],
)
def test_a_planted_upward_import_is_found(tmp_path: Path, planted: str) -> None:
    root = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "runner/__init__.py": "",
            "runner/door.py": planted,
            "rpc/__init__.py": "",
            "rpc/servicer.py": "from verdict.runner import door\n",
            "server/__init__.py": "",
            "server/assembly.py": "App = 1\n",
            "security/__init__.py": "",
            "security/gate.py": "",
            "cli/__init__.py": "",
            "cli/main.py": "",
        },
    )
    found = upward(graph(root))
    assert len(found) == 1, found
    assert found[0].startswith("verdict.runner.door:")


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "runner/__init__.py": "",
            "runner/door.py": "from verdict.runner.pipes import communicate\n",
            "runner/pipes.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from verdict.runner.door import X\n"
            ),
        },
    )
    assert cycles(graph(root)) == [["verdict.runner.door", "verdict.runner.pipes"]]
    assert upward(graph(root)) == []
