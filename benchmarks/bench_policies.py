"""Lowering LeRobot policies: how much stays on the CPU, and what lowering costs.

One parameter per policy entry of :mod:`vkbench.workloads.policies` (ACT's model, one
diffusion UNet step, ...). Every entry is processed once per commit (its
*record*, made by the first benchmark that needs it, :func:`_row`); the
``track_*`` methods read it:

* ``PolicyPartition`` (gate): export + ``to_edge`` + partition, no Vulkan code
  generation: the partitioner's counts for a few minutes of work.
* ``PolicyLowering`` / ``PolicyLoweringStages`` (standard): the full lowering:
  seconds per stage, memory, program size; in the standard tier the gate's
  counts are read from this record too.
* ``VLAPolicyLowering`` / ``VLAPolicyLoweringStages`` (full): the reduced VLAs,
  fully lowered, counts included.

Seconds and memory are ``track_`` values from that one instrumented lowering,
not asv ``time_``/``peakmem_`` re-runs (a lowering takes seconds to minutes).
Exported programs come from the on-disk cache (:mod:`vkbench.workloads.policies.cache`),
shared by every commit. Entries that cannot be built, exported or lowered
skip with the stage and the first error line; their work seconds still count.
"""

from __future__ import annotations

from typing import Any

from vkbench.suite.catalogue import FAST_ENTRIES, STAGES, VLA_ENTRIES  # fixed: one grid per commit

from .common import (
    cache_directory,
    et_count,
    note_cpu,
    note_failure,
    note_inputs,
    quiet,
    record_path,
    safe_import,
    shared_record,
    skip,
    suite_version,
    version_classes,
)

version = suite_version(__name__)  # asv: every benchmark here, a digest of the code its records run
_policies, _IMPORT_ERROR = safe_import("vkbench.workloads.policies")


def _row(directory: str, name: str, full: bool) -> dict[str, Any]:
    """The entry's record: fully lowered (``full``) or partitioned only, each made once per commit.

    A partition-only request is answered by the full lowering's record when
    the run already made it (same partitioner, same counts), so the standard
    tier never partitions an entry twice: its ``PolicyLowering*`` classes
    sort, and run, before ``PolicyPartition*``.
    """
    full_key, counts_key = f"{name}.full", f"{name}.partition"
    if not full and record_path(directory, full_key).is_file():
        return shared_record(directory, full_key, dict)
    return shared_record(directory, full_key if full else counts_key, lambda: _survey(name, full))


def _survey(name: str, full: bool) -> dict[str, Any]:
    """Build, export and lower one entry (never raises); a missing entry is a blocked row."""
    quiet()
    entry = _policies.ENTRIES.get(name) if _IMPORT_ERROR is None else None
    if entry is None:
        why = _IMPORT_ERROR or f"{name} is not a policy entry at this commit"
        row = {"status": "blocked", "stage": "import", "error_type": "", "error": why, "seconds": 0.0}
    else:
        row = _policies.survey_entry(entry, use_cache=True, partition_only=not full).to_json()
    if row.get("status") != "lowered":
        error = f"{row.get('error_type')}: {row.get('error')}" if row.get("error_type") else row.get("error")
        note_failure("policy", name, row.get("stage") or "lower", str(error))
    else:
        note_cpu("policy", name, row.get("coverage") or {})
    note_inputs("bench_policies")
    return row


class _Entries:
    """Records shared through this module's ``setup_cache`` directory (see :func:`_row`)."""

    param_names = ["entry"]
    timeout = 1800  # the first benchmark of an entry lowers it: up to ~3 min on 2 cores
    full = True  #: full lowering (preprocess and program) or partition only

    def setup_cache(self) -> str:
        return cache_directory()

    def setup(self, directory: str, entry: str, *stage: str) -> None:
        self.row = _row(directory, entry, self.full)
        if self.row.get("status") != "lowered" and self.skips_blocked:
            row = self.row
            skip(f"{entry} is blocked at {row.get('stage')}: {row.get('error_type', '')}: {row.get('error')}")
        self.coverage = self.row.get("coverage") or {}

    skips_blocked = True


class _Counts:
    """How much of the entry the Vulkan partitioner takes (lower is better)."""

    def track_cpu_ops(self, directory: str, entry: str) -> int:
        """Compute nodes left on the CPU."""
        return self.coverage["nodes_cpu"]

    track_cpu_ops.unit = "nodes"

    def track_vulkan_programs(self, directory: str, entry: str) -> int:
        """Delegated Vulkan programs; more means more CPU<->GPU transitions."""
        return self.coverage["vulkan_programs"]

    track_vulkan_programs.unit = "programs"

    def track_cpu_percent(self, directory: str, entry: str) -> float:
        """Share of compute nodes left on the CPU."""
        return self.coverage["cpu_percent"]

    track_cpu_percent.unit = "percent"

    def track_cpu_op_type_share(self, directory: str, entry: str) -> float:
        """Percent of the entry's unique operator types with a node left on the CPU (executorch#12495)."""
        return self.coverage["cpu_op_type_percent"]

    track_cpu_op_type_share.unit = "percent"

    def track_et_delegated_nodes(self, directory: str, entry: str) -> int:
        """ExecuTorch's count, not vkbench's: ``get_delegation_info``'s ``num_delegated_nodes``.

        Every call_function node inside the delegates, getitem included; recorded beside vkbench's
        counts so a reader can match them with what ExecuTorch's own tools report.
        """
        return et_count(self.coverage, "et_delegated_nodes")

    track_et_delegated_nodes.unit = "nodes"

    def track_et_non_delegated_nodes(self, directory: str, entry: str) -> int:
        """ExecuTorch's count, not vkbench's: ``get_delegation_info``'s ``num_non_delegated_nodes``.

        Every call_function node outside the delegates except the delegate calls, so getitem
        counts as a CPU node here and not in ``track_cpu_ops``.
        """
        return et_count(self.coverage, "et_non_delegated_nodes")

    track_et_non_delegated_nodes.unit = "nodes"


class _Cost:
    """What the entry's one full lowering cost: seconds, memory, program size."""

    def track_lower_seconds(self, directory: str, entry: str) -> float:
        """to_edge + partition + preprocess + to_executorch (export excluded: it is cached)."""
        return round(sum(self.coverage["seconds"].values()), 4)

    track_lower_seconds.unit = "seconds"

    def track_added_mb(self, directory: str, entry: str) -> float:
        """Peak RSS during the lowering above the RSS before it."""
        return self.coverage["added_rss_mb"]

    track_added_mb.unit = "MiB"

    def track_program_kb(self, directory: str, entry: str) -> float:
        """Size of the ExecuTorch program (``.pte``)."""
        return round((self.coverage["program_bytes"] or 0) / 1024, 1)

    track_program_kb.unit = "KiB"



class _Stages:
    param_names = ["entry", "stage"]

    def track_stage_seconds(self, directory: str, entry: str, stage: str) -> float:
        """Seconds of one lowering stage, so a regression names the stage."""
        return self.coverage["seconds"][stage]

    track_stage_seconds.unit = "seconds"


class _Work:
    r"""The record's own cost, blocked entries included (no skip): what ``vkbench cost`` sums.

    Its classes are named ``RecordCost*`` so that no comparing pattern (``PartitionWork``,
    ``PolicyPartition\.``, ``Policy(Partition|Lowering)``) selects them: a record's cost includes
    the export of a cold cache (624x on one entry), a bookkeeping figure, not the partitioner's."""

    skips_blocked = False

    def track_work_seconds(self, directory: str, entry: str) -> float:
        """Wall seconds of the entry's record: build + export (on a cache miss) + lowering."""
        return self.row["seconds"]

    track_work_seconds.unit = "seconds"


# -- standard tier: the fast entries (ACT, Diffusion, TDMPC, VQ-BeT, SAC), fully lowered ----------
class PolicyLowering(_Entries, _Cost):
    """Fast entries fully lowered once each: seconds, memory, program size."""

    params = [FAST_ENTRIES]


class PolicyLoweringStages(_Entries, _Stages):
    params = [FAST_ENTRIES, STAGES]
    param_names = _Stages.param_names


class RecordCostPolicyLowering(_Work, _Entries):
    params = [FAST_ENTRIES]


# -- gate tier: the fast entries' coverage counts, partition only (or the full record) ------------
class PolicyPartition(_Entries, _Counts):
    """What the Vulkan partitioner takes of each fast entry (no code generation in the gate)."""

    params = [FAST_ENTRIES]
    full = False


class RecordCostPolicyPartition(_Work, _Entries):
    params = [FAST_ENTRIES]
    full = False


# -- full tier: reduced VLAs and world-action models, built offline from local configs -------------
class VLAPolicyLowering(_Entries, _Counts, _Cost):
    """Counts and cost of each reduced VLA entry, fully lowered once."""

    params = [VLA_ENTRIES]
    timeout = 3600


class VLAPolicyLoweringStages(_Entries, _Stages):
    params = [VLA_ENTRIES, STAGES]
    param_names = _Stages.param_names
    timeout = 3600


class RecordCostVLAPolicyLowering(_Work, _Entries):
    params = [VLA_ENTRIES]
    timeout = 3600


version_classes(globals())  # asv: each class its own series (kept or restarted by evidence)
