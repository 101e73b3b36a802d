"""The layering rules of ``vkbench/``, checked on its source (no imports run).

* the packages form the layers of :data:`LAYERS`: a module imports only its own layer and the ones
  below it, counting imports inside functions (README's "Where things live" follows the list);
* no import cycles between vkbench packages, nor between vkbench modules;
* at most two ``__main__`` entry points (the ``vkbench`` command and the isolated child worker);
* one reader of asv's files: only :mod:`vkbench.results.asv_files` names ``result_columns``;
* parsed arguments stay in :mod:`vkbench.cli`: no other module takes an ``argparse.Namespace``;
* every benchmark or class name spelled out in ``vkbench/`` or ``tests/`` is one the catalogue has.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from vkbench.suite import catalogue

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vkbench"


#: vkbench's packages, bottom first: each imports only its own layer and the layers before it.
#: ``vkbench`` stands for the modules directly in the package (settings, paths, tables, git).
LAYERS = ("vkbench", "core", "workloads", "suite", "build", "commits", "results", "execution", "runs",
          "site", "cli", "__main__")
#: Imports by a name computed at run time (``importlib.import_module``), the one way a module reaches
#: past the layers: module -> the package prefix it loads. ``suite.suite_inputs`` loads the benchmark modules
#: (``benchmarks.<name>``, above vkbench) to measure which vkbench files their records read;
#: ``core.compat`` imports ExecuTorch modules by name (outside vkbench).
DYNAMIC = {"vkbench.suite.suite_inputs": "benchmarks.", "vkbench.core.compat": ""}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module an ``ImportFrom`` names, relative ones (``from .x import y``) resolved in ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(tree: ast.AST, modules: dict[str, Path], package: str = "vkbench") -> set[str]:
    """The vkbench modules a module imports anywhere in its body (functions included); ``package``: the
    one its relative imports are resolved in."""
    found = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(ast.parse(path.read_text()), modules, _package(name, path)) - {name}
            for name, path in modules.items()}


def test_relative_imports_resolve_into_the_graph() -> None:
    modules = {"vkbench.site.page": Path("page.py"), "vkbench.results.model": Path("model.py")}
    tree = ast.parse("from .page import Page\nfrom ..results import model\n")
    assert _imports(tree, modules, "vkbench.site") == {"vkbench.site.page", "vkbench.results.model"}


def _dynamic_imports(tree: ast.AST) -> list[str]:
    """What each ``importlib.import_module(...)`` call loads: its literal prefix (an f-string: its start)."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module" and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.Constant):
                found.append(str(arg.value))
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                found.append(str(arg.values[0].value))
            else:
                found.append("")
    return found


def test_every_import_by_a_computed_name_is_declared() -> None:
    """A module loading another by name is in :data:`DYNAMIC` with the prefix it loads; none loads vkbench."""
    seen = {}
    for name, path in _modules().items():
        for prefix in _dynamic_imports(ast.parse(path.read_text())):
            assert name in DYNAMIC and prefix.startswith(DYNAMIC[name]), (name, prefix)
            assert not prefix.startswith("vkbench"), (name, prefix)
            seen[name] = prefix
    assert set(seen) == set(DYNAMIC)


def test_no_function_of_the_results_model_takes_more_than_seven_parameters() -> None:
    """A call of eight or more arguments is a record in disguise: give it a dataclass (``RunLog``,
    ``PointStep``)."""
    wide = []
    for path in sorted((PACKAGE / "results").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                names = [a.arg for a in args.posonlyargs + args.args if a.arg not in ("self", "cls")]
                count = len(names) + len(args.kwonlyargs) + bool(args.vararg) + bool(args.kwarg)
                if count > 7:
                    wide.append(f"{path.name}:{node.name} ({count})")
    assert wide == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def layer(module: str) -> str:
    """The layer a vkbench module belongs to: its first-level package, or ``vkbench`` for a top module."""
    parts = module.split(".")
    if len(parts) > 2 or (ROOT / "vkbench" / parts[-1]).is_dir() or parts[-1] == "__main__":
        return parts[1]
    return "vkbench"


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``layer -> layers it imports``, from the module graph."""
    found: dict[str, set[str]] = {}
    for module, imported in graph.items():
        found.setdefault(layer(module), set()).update(layer(m) for m in imported)
    return {name: targets - {name} for name, targets in found.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a layer above its own (``module -> module``)."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted(f"{module} -> {target}" for module, imported in graph.items() for target in imported
                  if rank[layer(target)] > rank[layer(module)])


def test_the_layer_list_names_every_package() -> None:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert packages | {"vkbench", "__main__"} == set(LAYERS)


def test_the_layer_checks_find_an_upward_import_and_a_package_cycle() -> None:
    graph = {"vkbench.results.bug_rows": {"vkbench.site.dashboard"}, "vkbench.site.dashboard": set()}
    assert upward_imports(graph) == ["vkbench.results.bug_rows -> vkbench.site.dashboard"]
    graph["vkbench.site.dashboard"] = {"vkbench.results.model"}
    assert cycles(package_graph(graph)) == [["results", "site"]]


def test_the_readme_lists_the_layers_in_order() -> None:
    """README's "Where things live" names the packages in the order of :data:`LAYERS`."""
    listed = re.findall(r"^\| `vkbench/(\w+)/` \|", (ROOT / "README.md").read_text(), re.M)
    assert listed == [name for name in LAYERS if (PACKAGE / name).is_dir()]


def test_no_upward_imports() -> None:
    assert upward_imports(import_graph()) == []


def test_no_package_cycles() -> None:
    assert cycles(package_graph(import_graph())) == []


def _main_blocks(tree: ast.AST) -> int:
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
               and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def test_at_most_two_entry_points() -> None:
    entry_points = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("__main__.py")]
    entry_points += [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
                     if p.name != "__main__.py" and _main_blocks(ast.parse(p.read_text()))]
    assert len(entry_points) <= 2, entry_points


def _string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def test_only_the_results_reader_parses_asv_files() -> None:
    readers = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
               if any("result_columns" in text for text in _string_constants(p))]
    assert readers == ["vkbench/results/asv_files.py"]


def test_parsed_arguments_stay_in_the_command_line() -> None:
    takers = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
              if re.search(r"\bNamespace\b", p.read_text()) and "cli" not in p.relative_to(PACKAGE).parts]
    assert takers == []


_MODULES = "|".join(sorted({b.module for b in catalogue.ALL}))
_BENCH_NAME = re.compile(rf"\b(?:{_MODULES})\.[A-Z]\w*(?:\.\w+)?")


#: Where retired names may stand: the catalogue's list of them, the migration and its test.
MIGRATIONS = {"catalogue.py", "legacy.py", "test_execution.py"}


def test_no_stale_benchmark_names() -> None:
    """A class or benchmark spelled out anywhere in vkbench/ or tests/ is one the suite has."""
    known = {b.name for b in catalogue.ALL} | {b.class_name for b in catalogue.ALL}
    retired = catalogue.RETIRED | {name.rsplit(".", 1)[0] for name in catalogue.RETIRED}
    stale = []
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").glob("*.py")]:
        for name in _BENCH_NAME.findall(path.read_text()):
            if name not in known and not (name in retired and path.name in MIGRATIONS):
                stale.append(f"{path.relative_to(ROOT)}: {name}")
    assert stale == []


def test_the_command_line_imports_no_torch_before_a_subcommand_runs() -> None:
    """``python -m vkbench`` parses its arguments (and names a bad one) without importing torch or
    ExecuTorch: a usage error is one line in a fraction of a second, not after seconds of imports."""
    import subprocess
    import sys

    code = ("import sys, vkbench.cli; "
            "print(','.join(sorted(m for m in ('torch', 'executorch') if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", done.stdout


def test_each_module_name_is_used_once_across_packages() -> None:
    """A module's name says what it holds, once: two packages' ``measure.py`` (or ``equivalence.py``) make a
    reader ask which one a docstring or a traceback means. ``__init__`` and ``__main__`` aside."""
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "vkbench").rglob("*.py")):
        if path.stem not in ("__init__", "__main__"):
            names.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
