"""Measure which vkbench and ``benchmarks/`` files each benchmark module's records read.

As the ExecuTorch inputs of a lowering are found by running it (:mod:`vkbench.commits.fingerprint`),
the suite's own inputs are found by running it: for each ``benchmarks/bench_*.py`` a fresh child
process (so one module's imports do not count for another) installs the audit hook of
:mod:`vkbench.suite.reads`, forgets every vkbench module the measuring code itself imported (so a
file counts only when the benchmark module imports it again), imports the module as asv does
(``benchmarks.<name>``) and makes its records the way asv would: ``setup_cache`` once per cache,
then ``setup`` and the benchmark method for each selected point, in a temporary working directory.

What runs is the :data:`TIER` tier's selection (the gate's and the standard tier's classes, so the
full lowering and the fusion what-if are run too), narrowed by :data:`SUBSETS`: a point's parameter
chooses data, not code (every probe of ``setup_cache`` and every policy entry go through
``vkbench.core.lowering``; every builder module is imported by the policies package, whichever
entry is built), so a few values reach the same files as the whole grid at a fraction of its
cost. The runtime modules' records need a Vulkan build and are outside the tier: their modules
are measured as imported. A file a record reads outside its list at recording time is noticed
(``vkbench.results.run_log.note_inputs``) and stored in the sidecar, and ``vkbench history
suite-inputs`` adds it on the next measurement.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from vkbench.suite import identity, tiers
from vkbench.suite.reads import FileRecorder

#: The tier whose selection is run (a superset of the gate's).
TIER = "standard"
#: Benchmark module -> parameter name -> the values run (the others run the same code; see above).
#: The probes: one delegated whole, one with a CPU op and its reason, one refused by ``to_edge``
#: (the non-Core-ATen retry), one failing, instead of all 24. ``blocks`` 50: Blocks(n) of any size
#: is one builder and one partition. ``tdmpc/pi``, the cheapest entry: with ``vqbet/rollout`` (the
#: non-Core-ATen retry, ``aten.multinomial``) as well the list was the same 45 files, at 4x the cost.
SUBSETS: dict[str, dict[str, list[Any]]] = {
    "bench_probes": {"case": ["linear_f32", "elu", "bucketize", "complex_rope"]},
    "bench_partition": {"blocks": [50]},
    "bench_policies": {"entry": ["tdmpc/pi"]},
}
#: asv's benchmark method names (``asv_runner.benchmarks``' ``name_regex`` of each type).
METHOD = re.compile(r"^(time|timeraw|track|mem|peakmem)_")
#: The child's command: run :func:`child` with the module's name, the file to write and the subset.
CHILD = "import sys; from vkbench.suite.suite_inputs import child; child(*sys.argv[1:4])"

Point = tuple[type, str, tuple[Any, ...]]  #: benchmark class, method name, parameter values


def modules() -> list[str]:
    """The benchmark modules of the checkout (``bench_probes``, ...)."""
    return sorted(p.stem for p in identity.roots()["benchmarks"].glob("bench_*.py"))


def measure(names: list[str] | None = None, progress: Callable[[str], None] | None = None,
            subsets: dict[str, dict[str, list[Any]]] | None = None) -> identity.SuiteInputs:
    """Measure each module (default: all) in its own child process, one after another, each on
    its subset of ``subsets`` (default :data:`SUBSETS`)."""
    subsets = SUBSETS if subsets is None else subsets
    found = {}
    for name in names or modules():
        if progress:
            progress(name)
        found[name] = _in_child(name, subsets.get(name, {}))
    return identity.SuiteInputs(found, _environment(subsets))


def _environment(subsets: dict[str, dict[str, list[Any]]]) -> str:
    from importlib.metadata import PackageNotFoundError, version

    def known(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "none"

    return (f"python {sys.version.split()[0]}, torch {known('torch')}, executorch {known('executorch')}; "
            f"tier {TIER}, subsets {json.dumps(subsets, sort_keys=True)}")


def _in_child(name: str, subset: dict[str, list[Any]]) -> identity.ModuleInputs:
    with tempfile.TemporaryDirectory(prefix="vkbench-suite-inputs-") as tmp:
        out = Path(tmp) / "inputs.json"
        # the failure log on, as under ``vkbench record``: the records' notes run too
        env = {**os.environ, "VKBENCH_FAILURE_LOG": str(Path(tmp) / "failures.jsonl")}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", CHILD, name, str(out), json.dumps(subset)], cwd=tmp,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = round(time.monotonic() - started, 1)
        if done.returncode != 0 or not out.is_file():
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"measuring {name} failed (exit {done.returncode}):\n{tail}")
        data = json.loads(out.read_text())
    if data["errors"]:
        raise RuntimeError(f"{name}: records failed while measured: {'; '.join(data['errors'][:3])}")
    return identity.ModuleInputs(data["files"], data["dirs"], data["ran"], seconds)


# -- in the child ------------------------------------------------------------------------------------

def child(name: str, out: str, subset: str = "{}") -> None:
    """Import benchmark module ``name`` and make its records under the audit hook, narrowed to
    ``subset`` (JSON, ``param -> values``); write what it read to ``out``."""
    trees = identity.roots()
    recorder = FileRecorder.installed(list(trees.values()))
    for key in [k for k, m in sys.modules.items() if _inside(m, trees)]:
        del sys.modules[key]  # the measuring code's own modules: counted only if imported again
    sys.path.insert(0, str(trees["benchmarks"].parent))
    with recorder.recording():
        module = importlib.import_module(f"benchmarks.{name}")
        narrowed = json.loads(subset)
        narrow(module, narrowed)
        ran, errors = run_records(module, name, tiers.TIERS[TIER], narrowed)
    files, dirs = recorder.paths()
    Path(out).write_text(json.dumps({"files": files, "dirs": dirs, "ran": ran, "errors": errors}))


def _inside(module: ModuleType | None, trees: dict[str, Path]) -> bool:
    path = getattr(module, "__file__", None)
    return bool(path) and any(Path(path).resolve().is_relative_to(root) for root in trees.values())


def narrow(module: ModuleType, subset: dict[str, list[Any]]) -> None:
    """Narrow each grid of ``module`` named in ``subset`` to its values, in place: the grid lists are
    the catalogue's, shared by the classes and the ``setup_cache`` loops over them (the probes'
    makes every probe of ``PROBE_NAMES``), so a narrowed record is made for the subset only. Only
    ever in the measuring child."""
    for cls in vars(module).values():
        if not inspect.isclass(cls):
            continue
        for param, grid in zip(getattr(cls, "param_names", []) or [], getattr(cls, "params", []) or [],
                               strict=False):
            if param in subset and isinstance(grid, list):
                grid[:] = [value for value in grid if value in subset[param]]


def points(module: ModuleType, name: str, pattern: str) -> Iterator[Point]:
    """The points of ``module`` that ``asv run -b pattern`` selects (matched against the name and
    ``name(param, ...)`` with asv's ``repr`` of each value)."""
    for class_name, cls in vars(module).items():
        if class_name.startswith("_") or not inspect.isclass(cls):
            continue
        for method in sorted(m for m in dir(cls) if METHOD.match(m)):
            full = f"{name}.{class_name}.{method}"
            params = list(getattr(cls, "params", []) or [])
            grid = params if params and isinstance(params[0], list) else [params] if params else []
            for combo in itertools.product(*grid):
                quoted = f"{full}({', '.join(map(repr, combo))})" if grid else full
                if re.search(pattern, full) or re.search(pattern, quoted):
                    yield cls, method, combo


def run_records(module: ModuleType, name: str, pattern: str,
                subset: dict[str, list[Any]]) -> tuple[str, list[str]]:
    """Run every selected point once as asv would (``setup_cache`` once per cache function, then
    ``setup`` and the method); returns what ran and the errors (a skip is not one)."""
    caches: dict[Any, Any] = {}
    ran = skipped = 0
    errors: list[str] = []
    benchmarks = set()
    for cls, method, combo in points(module, name, pattern):
        label = f"{cls.__name__}.{method}{combo}"
        make = getattr(cls, "setup_cache", None)
        key = getattr(make, "__func__", make)
        try:
            if make is not None and key not in caches:
                caches[key] = make(cls())
            args = ([caches[key]] if make is not None else []) + list(combo)
            instance = cls()
            if hasattr(instance, "setup"):
                instance.setup(*args)
            getattr(instance, method)(*args)
            ran += 1
        except NotImplementedError:
            skipped += 1
        except Exception as error:  # noqa: BLE001 - reported, with the point, by the parent
            errors.append(f"{label}: {type(error).__name__}: {error}")
        benchmarks.add(f"{cls.__name__}.{method}")
    if not benchmarks:
        return f"import only: the {TIER} tier selects none of its benchmarks", errors
    narrowed = ", ".join(f"{k} {v}" for k, v in subset.items())
    return (f"{ran + skipped} points ({skipped} skipped) of {len(benchmarks)} benchmarks, {TIER} tier"
            + (f", {narrowed}" if narrowed else "")), errors
