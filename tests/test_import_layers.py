"""No import circle in tomacs (issue 16): a module that imports its own importer can only be read
together with it, and its import order decides whether it loads at all.

Every `import` is counted, at the top or inside a function or an `if TYPE_CHECKING:` block, as a
static reading of the source counts them. None is accepted: a plugin table names its plugins as "module:attr"
strings (tomacs.registry), so a base module never imports the modules that subclass it."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "tomacs"


def _module(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the tomacs modules it imports (a `from pkg import name` of a submodule counts it)."""
    modules = {_module(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                if (
                    t in modules
                    and t != mod
                    and not (modules[t].name == "__init__.py" and mod.startswith(t + "."))
                ):
                    graph[mod].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]


def test_tomacs_has_no_import_circle() -> None:
    graph = import_graph()
    assert "tomacs.job.components" in graph["tomacs.training.reinforce"]  # the graph is read at all
    found = [sorted(c) for c in circles(graph)]
    assert found == [], f"import circles: {found}; move the shared name to a module both can import"


# The package's floors, ground first: a unit (a top-level module, or a folder with everything in it) may
# import only units on lower floors, so the top level reads as layers and no import runs back up. A new
# unit must be placed here; an import that needs a unit on its own floor or above is a design question.
FLOORS: list[set[str]] = [
    {"types", "seeding", "paths", "tokens", "graphs", "sqlite_store", "registry", "voting", "runspec"},
    {"serialize", "metrics", "embedding", "agents", "benchmarks", "backbones"},
    {"transcripts", "methods"},
    {"config", "execution", "sim", "testing"},  # test doubles: requests, a method (tomacs.testing.methods)
    {"credibility"},
    {"job"},
    {"training", "report"},
    {"view"},  # reads runs as the report does; a job's W&B tracker (launch) logs its episodes
    {"analysis", "launch"},
    {"cli"},
    # methods' extras (tomacs/extras/<method>/: trainer, data, report section, CLI command): they plug a
    # method into the floors above methods/ and only the "module:attr" strings the method names reach them
    {"extras"},
]


def unit(module: str) -> str:
    """tomacs.job.files -> job; tomacs.config -> config."""
    return module.split(".")[1]


def upward_imports(graph: dict[str, set[str]], floors: list[set[str]]) -> list[str]:
    floor = {u: i for i, units in enumerate(floors) for u in units}
    return sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if a != "tomacs" and b != "tomacs" and unit(a) != unit(b) and floor[unit(b)] >= floor[unit(a)]
    )


def test_the_floor_check_finds_an_import_that_runs_up() -> None:
    graph = {"tomacs.types": {"tomacs.cli"}, "tomacs.cli": {"tomacs.types"}, "tomacs.job.a": {"tomacs.job.b"}}
    assert upward_imports(graph, [{"types"}, {"cli", "job"}]) == ["tomacs.types -> tomacs.cli"]


def test_a_method_may_not_import_its_own_extras() -> None:
    graph = {
        "tomacs.methods.x": {"tomacs.extras.x.trainer"},  # the method reads its trainer: runs up
        "tomacs.extras.x.trainer": {"tomacs.training.core", "tomacs.methods.x", "tomacs.extras.x.data"},
        "tomacs.cli.run": {"tomacs.extras.x.cli"},  # the CLI imports a method's command: runs up
    }
    assert upward_imports(graph, FLOORS) == [
        "tomacs.cli.run -> tomacs.extras.x.cli",
        "tomacs.methods.x -> tomacs.extras.x.trainer",
    ]


def test_every_import_runs_down_the_floors() -> None:
    graph = import_graph()
    units = {unit(m) for m in graph if m != "tomacs"}
    placed = set().union(*FLOORS)
    assert units == placed, (
        f"place these units on a floor: {sorted(units - placed)}; gone: {sorted(placed - units)}"
    )
    assert upward_imports(graph, FLOORS) == []


def test_the_top_level_holds_at_most_twelve_modules() -> None:
    modules = sorted(p.name for p in PKG.glob("*.py"))
    assert len(modules) <= 12, modules
