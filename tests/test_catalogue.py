"""The suite's catalogue names what ``benchmarks/`` defines, and agrees with the workloads.

Readers (summary, cost, the site, the changes table) name benchmarks through
:mod:`vkbench.suite.catalogue`; a class renamed in ``benchmarks/`` without the
catalogue, or a grid changed in one place only, fails here instead of
silently emptying a chart.
"""

from __future__ import annotations

import inspect

import pytest

from vkbench.suite import catalogue

MODULES = sorted({b.module for b in catalogue.ALL})
PREFIXES = ("track_", "time_", "peakmem_", "mem_", "timeraw_")


def _grid(cls: type) -> list[list[object]]:
    params = cls.params
    return params if params and isinstance(params[0], list) else [params]


@pytest.mark.parametrize("bench", catalogue.ALL, ids=str)
def test_every_catalogued_benchmark_exists_with_its_grid(load_benchmark, bench: catalogue.Benchmark) -> None:
    module = load_benchmark(bench.module)
    cls = getattr(module, bench.cls, None)
    assert inspect.isclass(cls), f"{bench.class_name} is not a class of benchmarks/{bench.module}.py"
    assert callable(getattr(cls, bench.method, None)), f"{bench} has no method {bench.method}"
    assert tuple(cls.param_names) == bench.param_names, (bench, cls.param_names)


def test_every_benchmark_is_catalogued(load_benchmark) -> None:
    """A new benchmark gets a catalogue name too, so readers never spell one out themselves."""
    named = {b.name for b in catalogue.ALL}
    missing = []
    for module_name in MODULES:
        module = load_benchmark(module_name)
        for cls_name, cls in vars(module).items():
            if not inspect.isclass(cls) or cls_name.startswith("_") or cls.__module__ != module.__name__:
                continue
            for attr in dir(cls):
                if attr.startswith(PREFIXES) and f"{module_name}.{cls_name}.{attr}" not in named:
                    missing.append(f"{module_name}.{cls_name}.{attr}")
    assert missing == []


def test_grids_are_the_catalogues(load_benchmark) -> None:
    probes = load_benchmark("bench_probes")
    policies = load_benchmark("bench_policies")
    partition = load_benchmark("bench_partition")
    runtime = load_benchmark("bench_runtime")
    policy_runtime = load_benchmark("bench_policy_runtime")
    assert _grid(probes.ProbeCoverage) == [catalogue.PROBE_NAMES]
    assert _grid(policies.PolicyPartition) == [catalogue.FAST_ENTRIES]
    assert _grid(policies.VLAPolicyLowering) == [catalogue.VLA_ENTRIES]
    assert _grid(policies.PolicyLoweringStages) == [catalogue.FAST_ENTRIES, catalogue.STAGES]
    assert _grid(partition.PartitionScaling) == [catalogue.BLOCK_SIZES]
    assert _grid(partition.PartitionScalingPhases) == [catalogue.BLOCK_SIZES, catalogue.PHASES]
    assert _grid(runtime.ProbeLadder) == [catalogue.PROBE_WORKLOADS, catalogue.RUNNERS]
    assert _grid(policy_runtime.VLAPolicyLadder) == [catalogue.VLA_ENTRIES, catalogue.RUNNERS]
    assert _grid(policy_runtime.PolicyRuntime) == [catalogue.RUNTIME_ENTRIES, catalogue.RUNTIME_BACKENDS,
                                                   catalogue.RUNNERS]


def test_probe_and_entry_lists_agree_with_the_workloads() -> None:
    from vkbench.workloads.policies import ENTRIES
    from vkbench.workloads.probes import PROBES

    assert list(PROBES) == catalogue.PROBE_NAMES
    what_ifs = {name for name, entry in ENTRIES.items() if entry.notes.startswith("what-if:")}
    fast = {name for name, entry in ENTRIES.items() if not entry.slow}
    assert set(catalogue.FAST_ENTRIES) == fast - what_ifs  # the what-if rows live in the survey only
    assert set(catalogue.VLA_ENTRIES) == set(ENTRIES) - fast
    assert not set(catalogue.FAST_ENTRIES) & set(catalogue.VLA_ENTRIES)
    assert set(catalogue.RUNTIME_ENTRIES) <= set(catalogue.FAST_ENTRIES)


def test_committed_results_name_only_catalogued_or_retired_benchmarks() -> None:
    """What the readers look for is what the committed results hold (the stale-name bug class)."""
    from vkbench.paths import RESULTS_ROOT
    from vkbench.results.asv_files import read_dir

    held = {name for folder in ("upstream", "releases") for f in read_dir(RESULTS_ROOT / folder).files
            for name in f.results}
    for bench in (catalogue.PROBE_CPU_OPS, catalogue.POLICY_CPU_OPS, catalogue.VLA_CPU_OPS,
                  catalogue.PARTITION_TIME, catalogue.PARTITION_PHASES, catalogue.PROBE_FAILED):
        assert bench.name in held, f"{bench} is in no committed result file"
