"""The runtime rows: per (machine, result file) of the releases, the runtime benchmarks' values.

Read from the results model once per publish (:func:`vkbench.site.load.load_site_data`) and by
``vkbench runtime``; :mod:`vkbench.site.runtime_page` and the dashboard's ladder draw them. Also the
policy runs recorded outside asv (``<results root>/runtime/policy-latency-*.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.paths import RESULTS_ROOT
from vkbench.results.asv_files import read_dir
from vkbench.results.ladder import LADDERS, rung_name
from vkbench.results.model import Params, ResultFile, ResultSet
from vkbench.suite import catalogue
from vkbench.suite.catalogue import Benchmark

#: The checkout's release results, which ``vkbench runtime`` tabulates.
RESULTS = RESULTS_ROOT / "releases"
#: Under a results root: the policy runs recorded outside asv.
POLICY_LATENCY_FOLDER = "runtime"

#: asv's ``runner`` parameter -> how the page names it.
RUNNER_LABELS = {"python": "Python runtime", "native": "C++ runner"}
#: ``Many(n)`` benchmarks (params: n × runner) -> column label, ``{runner}`` filled in.
MANY_COLUMNS = {
    catalogue.MANY_EXECUTE: "execute ({runner})",
    catalogue.MANY_PER_DISPATCH: "µs per dispatch ({runner})",
    catalogue.MANY_DIFF: "max abs diff ({runner})",
}
MANY_EAGER = catalogue.MANY_EAGER
EAGER_MANY_LABEL = "eager PyTorch"
#: Policy benchmarks (params: entry × backend × runner) -> quantity.
POLICY_BENCHMARKS = {catalogue.POLICY_FORWARD: "forward", catalogue.POLICY_DIFF: "max abs diff"}
POLICY_EAGER = catalogue.POLICY_EAGER
STEP_LIMIT = catalogue.STEP_LIMIT
#: How ``ProbeLadder`` names its rows (params ``probe/<name>``), next to the policy entries.
PROBE_PREFIX = "probe/"


def machine_rows(results: Path = RESULTS) -> list[dict[str, Any]]:
    """:func:`runtime_rows` of the asv results under ``results`` (the checkout's releases by default)."""
    return runtime_rows(read_dir(results))


def runtime_rows(found: ResultSet) -> list[dict[str, Any]]:
    """One dict per (machine, result file) that holds runtime benchmarks."""
    rows = []
    for record in found.files:
        runtime = {name: held for name, held in record.results.items()
                   if name.startswith(("bench_runtime.", "bench_policy_runtime."))}
        if not any(p.value is not None for name, held in runtime.items() if name != MANY_EAGER.name
                   for p in held.points()):
            continue
        machine = found.machines.get(record.machine, {})
        row: dict[str, Any] = {"machine": record.machine, "commit": record.commit[:8],
                               "cpu": machine.get("cpu", ""), "limits": {}, "many": {}, "policies": {},
                               "ladder": {}}
        for benchmark, quantity in POLICY_BENCHMARKS.items():
            for (entry, backend, runner), value in _values(record, benchmark):
                row["policies"].setdefault((RUNNER_LABELS[runner], entry, backend), {})[quantity] = value
        for (entry,), value in _values(record, POLICY_EAGER):
            row["policies"].setdefault(("eager PyTorch", entry, "eager"), {})["forward"] = value
        for benchmark in LADDERS:
            for (entry, runner), short in _values(record, benchmark):
                if short is not None:
                    row["ladder"][(RUNNER_LABELS[runner], entry)] = rung_name(short)
        for (runner,), short in _values(record, STEP_LIMIT):
            if short is None:
                continue
            cap = default_cap()  # asv does not store VKBENCH_STEP_CAP with the results
            limit = int(cap - short)  # asv stores floats; a step count is whole
            row["limits"][RUNNER_LABELS[runner]] = {"short_of_cap": short, "cap": cap, "limit": limit}
        for benchmark, label in MANY_COLUMNS.items():
            for (n, runner), value in _values(record, benchmark):
                row["many"].setdefault(int(n), {})[label.format(runner=RUNNER_LABELS[runner])] = value
        for (n,), value in _values(record, MANY_EAGER):
            row["many"].setdefault(int(n), {})[EAGER_MANY_LABEL] = value
        rows.append(row)
    return rows


def many_labels() -> list[str]:
    """Every ``Many(n)`` column the page can show, in order."""
    return [template.format(runner=label) for template in MANY_COLUMNS.values()
            for label in RUNNER_LABELS.values()] + [EAGER_MANY_LABEL]


def _values(record: ResultFile, benchmark: Benchmark) -> list[tuple[Params, float | None]]:
    """``(params, value)`` for every parameter combination of one benchmark (none when it has no value)."""
    points = record.points(benchmark.name)
    return [(p.params, p.value) for p in points] if any(p.value is not None for p in points) else []


def default_cap() -> int:
    """The step cap the runs used (asv does not store ``VKBENCH_STEP_CAP`` with the results)."""
    return settings.integer("VKBENCH_STEP_CAP")


def policy_latency_tables(folder: Path) -> list[tuple[str, list[Any]]]:
    """Runs saved outside asv (``vkbench runtime run --out``, or older ``runs`` files), as outcomes."""
    from vkbench.execution.outcome import Outcome

    tables = []
    for path in sorted(folder.glob("policy-latency-*.json")):
        data = json.loads(path.read_text())
        runs = data.get("outcomes") or data.get("runs") or []
        if runs:
            tables.append((path.name, [Outcome.from_json(run) for run in runs]))
    return tables
