"""A method owns its extras (issue 41, item 5): no module outside tomacs/methods/ (and a method's own extras,
tomacs/extras/<method>/) checks which method it has.

What a method needs beyond its graphs it names itself (`tomacs.methods.base.Method`: its `trainer`, its CLI
`commands`, its `report_sections`, the `replay_*` and `credit_policy_refusal` hooks), so a generic module
asks the method instead of testing for it. This test scans every module outside tomacs/methods/ for such
tests, statically (the source, not a run):

* `isinstance` / `issubclass` / `type(x) is` with a concrete method class (a class `METHODS` registers);
* a comparison (`==`, `!=`, `in`, `not in`, `match`/`case`, `.startswith`) with a method's name: any
  comparison for a name that is no other word (todycomm, gsafeguard, ...); for a name that is also a plain
  word of the package (the static topologies none, random, complete, ...; crs, also a decision rule) only
  when the other side speaks of a method (`k.method`, `method.name`, `cfg.method`);
* a comparison of a method's attribute with a string (`method.trainer == "supervised"`,
  `getattr(method, "trainer", ...) == ...`): what the method is told apart by belongs to the method.

A local name bound to such an expression (`trainer = getattr(method, "trainer", "reinforce")`, `name =
results["method"]`) counts as the expression, within its function.

Tables that name methods (a registry's "module:attr" strings, the paper's rows, a help text) are data, not
tests, and pass. The unit cases at the end keep the scan honest: each bad snippet must be found.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from tomacs.methods.registry import METHODS
from tomacs.methods.static import STATIC_METHODS

PKG = Path(__file__).resolve().parents[1] / "tomacs"
NAMES = set(METHODS.names())
# names that are also plain words of the package: a test of one is a method check only beside "method"
COMMON = set(STATIC_METHODS) | {"crs"}


def _classes() -> set[str]:
    """The concrete method classes: every registered class and every subclass of one."""
    out: set[str] = set()
    todo = [METHODS.get(n) for n in METHODS.names()]
    while todo:
        cls = todo.pop()
        if cls.__name__ not in out:
            out.add(cls.__name__)
            todo.extend(cls.__subclasses__())
    return out


CLASSES = _classes()


def _strings(node: ast.AST) -> list[str]:
    """The string constants a comparison operand holds (itself, or a tuple/list/set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _names(node: ast.AST) -> list[str]:
    """The class names an isinstance argument holds (Name, module.Attribute, or a tuple of them)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _names(e)]
    return []


def _speaks_of_a_method(node: ast.AST, aliases: dict[str, ast.AST]) -> bool:
    if isinstance(node, ast.Name) and node.id in aliases:
        return _speaks_of_a_method(aliases[node.id], {})
    return "method" in ast.unparse(node).lower()


def _method_attribute(node: ast.AST, aliases: dict[str, ast.AST]) -> bool:
    """`method.x`, `comps.method.x`, `getattr(method, "x", ...)`: an attribute read off a method object."""
    if isinstance(node, ast.Name) and node.id in aliases:
        return _method_attribute(aliases[node.id], {})
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "getattr"):
        if node.func.id == "str":
            return bool(node.args) and _method_attribute(node.args[0], aliases)
        return bool(node.args) and _method_attribute(ast.Attribute(value=node.args[0], attr="_"), aliases)
    if isinstance(node, ast.Attribute):
        base = ast.unparse(node.value)
        return base == "method" or base.endswith(".method")
    return False


def _aliases(scope: ast.AST) -> dict[str, ast.AST]:
    """Local names bound once to a method attribute or to an expression that speaks of a method."""
    out: dict[str, ast.AST] = {}
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if _method_attribute(value, {}) or _speaks_of_a_method(value, {}):
                out[node.targets[0].id] = value
    return out


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of `scope` outside the functions it defines (each is a scope of its own)."""
    out, todo = [], list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _name_test(names: list[str], other: ast.AST, aliases: dict[str, ast.AST]) -> list[str]:
    return [n for n in names if n in NAMES and (n not in COMMON or _speaks_of_a_method(other, aliases))]


def violations(source: str, where: str = "<snippet>") -> list[str]:
    """Every method check in `source`, as `where:line: what`."""
    found: list[str] = []

    def hit(node: ast.AST, what: str) -> None:
        found.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}: {ast.unparse(node)[:100]}")

    tree = ast.parse(source)
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]
    for scope in scopes:
        _scan(scope, _aliases(scope), hit)
    return sorted(set(found))


def _scan(scope: ast.AST, aliases: dict[str, ast.AST], hit: Any) -> None:
    """The checks in `scope` (a function's body, or the module's outside its functions)."""
    for node in _own_nodes(scope):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                bad = [c for c in _names(node.args[1]) if c in CLASSES]
                if bad:
                    hit(node, f"{func.id} of method class {', '.join(bad)}")
            if isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith") and node.args:
                bad = _name_test(_strings(node.args[0]), func.value, aliases)
                if bad:
                    hit(node, f"method name {', '.join(bad)} tested")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for a, b in zip(operands, operands[1:], strict=False):
                for x, y in ((a, b), (b, a)):
                    bad = _name_test(_strings(x), y, aliases)
                    if bad:
                        hit(node, f"method name {', '.join(bad)} compared")
                    if _strings(x) and _method_attribute(y, aliases):
                        hit(node, "a method's attribute compared with a string")
                    if isinstance(x, ast.Name) and x.id in CLASSES:
                        hit(node, f"method class {x.id} compared")
        elif isinstance(node, ast.Match):
            for case in node.cases:
                for pat in ast.walk(case.pattern):
                    if isinstance(pat, ast.MatchValue):
                        bad = _name_test(_strings(pat.value), node.subject, aliases)
                        if bad:
                            hit(pat, f"method name {', '.join(bad)} matched")


def test_no_module_outside_methods_checks_which_method_it_has() -> None:
    found = [
        v
        for p in sorted(PKG.rglob("*.py"))
        if p.relative_to(PKG).parts[0] not in ("methods", "extras")  # a method's own files
        for v in violations(p.read_text(), str(p.relative_to(PKG.parent)))
    ]
    assert found == [], (
        "method checks outside tomacs/methods/ and a method's extras (tomacs/extras/); let the method say "
        "it (a hook or attribute with a generic default in tomacs/methods/base.py, or an extra it names):\n"
        + "\n".join(found)
    )


def test_the_scan_reads_the_methods() -> None:
    assert {"todycomm", "gsafeguard", "complete"} <= NAMES
    assert {"TodyComm", "GSafeguard", "CompleteGraph"} <= CLASSES


@pytest.mark.parametrize(
    "snippet",
    [
        "from tomacs.methods.todycomm import TodyComm\nif isinstance(method, TodyComm):\n    pass",
        "import tomacs.methods.todycomm as t\nok = isinstance(m, (int, t.TodyComm))",
        "ok = issubclass(cls, GSafeguard)",
        "ok = type(m) is TodyComm",
        'if key.method == "gsafeguard":\n    pass',
        'if self.name == "gsafeguard":\n    pass',
        'ok = name in ("todycomm", "agentprune")',
        'ok = "todycomm" != results["method"]',
        'ok = key.method.startswith("gsafeguard")',
        'ok = cfg.method.name == "complete"',  # a common word, but beside "method"
        'ok = results["method"] == "crs"',
        'if getattr(method, "trainer", "reinforce") == "supervised":\n    pass',
        'ok = comps.method.trainer == "reinforce"',
        'def f(m):\n    kind = getattr(m.method, "trainer", "x")\n    return kind == "reinforce"',
        'def f(results):\n    name = str(results["method"])\n    return name == "crs" and True',
        'def f(cfg):\n    name = cfg.method.name\n    return name.startswith("none")',
        'match name:\n    case "todycomm":\n        pass',
    ],
)
def test_the_scan_finds_a_method_check(snippet: str) -> None:
    assert violations(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        'METHODS = Registry("method", {"todycomm": "tomacs.methods.todycomm:TodyComm"})',  # a table
        'PAPER_METHOD = "todycomm"\nrows = [k for k in cells if k.method == PAPER_METHOD]',  # data, named
        'if name == "none":\n    pass',  # a logger called none
        'def f(logger):\n    name = str(logger.get("name", "none"))\n    return name == "none"',
        'if decision == "crs":\n    pass',  # the decision rule
        'if graph == "complete":\n    pass',  # the simulator's graph
        "ok = isinstance(method, LearnedMethod)",  # a base class, not a method
        'msg = "train one with `tomacs train method=todycomm`"',
        "why = method.credit_policy_refusal()",
    ],
)
def test_the_scan_lets_tables_and_other_words_pass(snippet: str) -> None:
    assert violations(snippet) == []
