"""The suite's tiers: which asv benchmarks a run selects, as ``asv run -b`` patterns.

asv matches ``-b`` against ``name(param, ...)`` strings, so one regular
expression per tier selects classes *and* parameter values. A tier costs the
``setup_cache`` of every class it touches (each lowers its workloads once per
commit), so policy records are split into classes by cost; ``Blocks(n)`` is
recorded per size on first use, so the gate (sizes 50/100/200) never builds
``Blocks(400)`` and never generates Vulkan code for a policy.

``RecordCost*`` classes (what making a record cost: ``vkbench cost`` reads them) are recorded by the
tiers but named so that no comparing pattern selects them; :data:`COMPARED` is what ``vkbench gate``
compares.

* ``gate``: probes, ``Blocks`` 50/100/200 (timed partition and the one
  instrumented record per size), the counted partitioner work at 50/100 (what
  the gate reads at ``-f 1.02``; 200 would add a minute), fast-policy coverage
  counts (partition only).
* ``standard``: gate + ``Blocks(400)`` + the what-if partition without
  torch.fx's horizontal fusion (:mod:`vkbench.workloads.fusion`) + the fast policies'
  full lowering (seconds per stage, memory, program size).
* ``full``: standard + the reduced VLAs (full lowering, counts included).
* ``runtime``: the Vulkan runtime classes; they need a Vulkan build and skip
  on the PyPI wheel.
"""

from __future__ import annotations

GATE = (
    r"^bench_probes\."
    r"|^bench_partition\.(?!PartitionWithoutHorizontalFusion|PartitionWork\.)\w+\.\w+\((50|100|200)[,)]"
    r"|^bench_partition\.PartitionWork\.\w+\((50|100)[,)]"
    r"|^bench_policies\.PolicyPartition\.|^bench_policies\.RecordCostPolicyPartition\."
)
STANDARD = (r"^bench_probes\.|^bench_partition\.|^bench_policies\.Policy(Partition|Lowering)"
            r"|^bench_policies\.RecordCostPolicy(Partition|Lowering)\.")
FULL = r"^bench_probes\.|^bench_partition\.|^bench_policies\."
RUNTIME = r"^bench_runtime\.|^bench_policy_runtime\."

#: What ``vkbench gate`` measures and compares on both sides of a change: the tracks that are exact
#: from run to run (counted partitioner work, partitions, coverage counts, failures) and nothing that
#: depends on load or on a cache (no time, memory or ``RecordCost*`` bookkeeping). 50 and 100 blocks:
#: 200 adds a minute a side and has never stepped alone.
COMPARED = (
    r"^bench_partition\.PartitionWork\.track_partition_events\((50|100),"
    r"|^bench_partition\.PartitionScalingRecord\.track_partitions\((50|100)\)"
    r"|^bench_probes\.Probe(Coverage|Failure)\."
    r"|^bench_policies\.PolicyPartition\."
)

#: Tier name -> the ``asv run -b`` pattern that selects it.
TIERS: dict[str, str] = {"gate": GATE, "standard": STANDARD, "full": FULL, "runtime": RUNTIME}
#: Per-commit targets on a 2-core machine (minutes): what a tier must stay under.
TARGET_MINUTES: dict[str, float] = {"gate": 5, "standard": 15, "full": 45}


def bench_args(tier: str) -> list[str]:
    """``["-b", pattern]`` for ``tier``; ``KeyError`` names the known tiers."""
    if tier not in TIERS:
        raise KeyError(f"unknown tier {tier!r}; known: {', '.join(TIERS)}")
    return ["-b", TIERS[tier]]
