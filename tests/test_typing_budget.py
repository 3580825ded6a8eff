"""The share of tomacs' public signatures that use `Any` stays within its budget (issue 41, item 9).

`make lint` runs mypy on the package (pyproject.toml, [tool.mypy]); an `Any` in a signature switches
that checking off at the seam it annotates, so the share of such signatures may only go down.

Counted, by a static reading of the source with `ast`:
- public signatures: every function and method whose name does not start with `_` (so no dunder
  either), defined at a module's top level or in a class body (a nested class too; not inside a
  function), in a class whose name does not start with `_`, in a module under tomacs/ none of whose path
  parts starts with `_` (`__init__.py` excepted);
- those using Any: a parameter or return annotation that names `Any` (`Any`, `typing.Any`, inside a
  string annotation too, or a module-level alias of tomacs defined with Any), or that is missing: an
  unannotated parameter (besides a method's `self`/`cls`) or return is an implicit Any.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "tomacs"

# The share reached: 116 of 934 (12.4 %) when the budget was set up, from 305 of 925 (33.0 %) before the
# type checker ran; 86 of 973 (8.8 %) once the methods' batch state, their settings and the JSON records
# of known shape were typed. Issue 41 asks for at most 10 %: lower it as the count goes down; never raise it.
BUDGET = 0.09


@dataclass(frozen=True)
class Signature:
    where: str  # "tomacs/x.py:LINE Class.name"
    uses_any: bool


def _public_module(path: Path) -> bool:
    rel = path.relative_to(PKG.parent)
    return not any(part.startswith("_") and part != "__init__.py" for part in rel.parts)


def _names_any(node: ast.AST | None, aliases: set[str]) -> bool:
    if node is None:
        return False
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and (n.id == "Any" or n.id in aliases):
            return True
        if isinstance(n, ast.Attribute) and n.attr == "Any":
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            try:
                inner = ast.parse(n.value, mode="eval")
            except SyntaxError:
                continue
            if _names_any(inner, aliases):
                return True
    return False


def any_aliases(trees: list[ast.Module]) -> set[str]:
    """Module-level type aliases of tomacs that stand for (or contain) Any: `X = dict[str, Any]`,
    `X: TypeAlias = ...`, `type X = ...`; a name used in a signature then counts as Any."""
    out: set[str] = set()
    for tree in trees:
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                if _names_any(node.value, set()) and not isinstance(node.value, ast.Constant):
                    out.add(node.targets[0].id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if "TypeAlias" in ast.unparse(node.annotation) and _names_any(node.value, set()):
                    out.add(node.target.id)
            elif type(node).__name__ == "TypeAlias" and _names_any(getattr(node, "value", None), set()):
                out.add(node.name.id)  # `type X = ...` (Python 3.12 on)
    return out


def _functions(body: list[ast.stmt], owner: str) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((node, owner))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            out += _functions(node.body, f"{owner}{node.name}.")
    return out


def _uses_any(f: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, aliases: set[str]) -> bool:
    a = f.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *[p for p in (a.vararg, a.kwarg) if p is not None]]
    decorators = {ast.unparse(d) for d in f.decorator_list}
    bound = method and "staticmethod" not in decorators and bool(a.posonlyargs or a.args)
    checked = params[1:] if bound else params  # a method's self / cls is typed by its class
    if f.returns is None or any(p.annotation is None for p in checked):
        return True
    return _names_any(f.returns, aliases) or any(_names_any(p.annotation, aliases) for p in checked)


def signatures() -> list[Signature]:
    files = sorted(p for p in PKG.rglob("*.py"))
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in files}
    aliases = any_aliases(list(trees.values()))
    out = []
    for path, tree in trees.items():
        if not _public_module(path):
            continue
        for f, owner in _functions(tree.body, ""):
            if f.name.startswith("_"):
                continue
            where = f"{path.relative_to(PKG.parent)}:{f.lineno} {owner}{f.name}"
            out.append(Signature(where, _uses_any(f, bool(owner), aliases)))
    return out


def test_the_counter_reads_annotations() -> None:
    src = """
from typing import Any
import typing
Loose = dict[str, Any]
def a(x: int) -> int: ...
def b(x: Any) -> int: ...
def c(x: int) -> "dict[str, Any]": ...
def d(x) -> int: ...
def e(x: int): ...
def f(x: Loose) -> None: ...
def g(*args: typing.Any) -> None: ...
def _private(x: Any) -> Any: ...
class K:
    def m(self, x: int) -> int: ...
    @classmethod
    def n(cls) -> Any: ...
class _Hidden:
    def m(self, x: Any) -> Any: ...
"""
    tree = ast.parse(src)
    aliases = any_aliases([tree])
    assert aliases == {"Loose"}
    got = {
        f"{owner}{f.name}": _uses_any(f, bool(owner), aliases)
        for f, owner in _functions(tree.body, "")
        if not f.name.startswith("_")
    }
    assert got == {
        "a": False,
        "b": True,
        "c": True,
        "d": True,
        "e": True,
        "f": True,
        "g": True,
        "K.m": False,
        "K.n": True,
    }


def test_public_signatures_using_any_stay_within_budget() -> None:
    sigs = signatures()
    loose = [s for s in sigs if s.uses_any]
    share = len(loose) / len(sigs)
    figure = f"{len(loose)} of {len(sigs)} ({100 * share:.1f} %)"
    print(f"\npublic signatures using Any: {figure}, budget {100 * BUDGET:.1f} %")
    assert len(sigs) > 500, "the counter found too few public functions: is PKG right?"
    assert share <= BUDGET, (
        f"{len(loose)} of {len(sigs)} public signatures ({100 * share:.1f} %) use Any, over the budget of "
        f"{100 * BUDGET:.1f} %; type these (or the new ones):\n" + "\n".join(s.where for s in loose)
    )
