"""Partitioner cost as the graph grows: ``VulkanPartitioner.partition`` on Blocks(n).

Each size is exported, lowered to edge and partitioned (instrumented) *once
per commit*, by whichever benchmark of this module needs it first; the
*record* (partitions, phase split, memory, ``to_edge`` time) is written as
JSON into the directory of the module's ``setup_cache``, which asv keeps for
the whole run and uses as every benchmark's working directory. Usually that
first benchmark is ``time_partition`` (asv runs a group in name order, and
``PartitionScaling.`` sorts before ``PartitionScalingRecord.``), which
then keeps the edge program it built for its timed samples, so nothing is
built twice.

* ``PartitionScaling.time_partition`` is a genuine asv timing (the seed's
  headline, what ``asv continuous`` gates on): every sample partitions a
  fresh copy of the edge program (``partition`` tags nodes in place; asv
  re-runs ``setup`` per sample). Small sizes take several samples, 400 blocks
  (over a minute) one. The timer is process CPU time: the partitioner is
  single-threaded Python, and CPU time ignores the other jobs of a shared
  machine (its CV was a half to a third of wall time's, docs/suite.md).
* ``PartitionScalingRecord`` / ``PartitionScalingPhases`` read the record.
* ``PartitionWork.track_partition_events`` is the same partition *counted*
  (Python calls + jumps per phase, :mod:`vkbench.workloads.partition_work`):
  exact from run to run, so the gate reads it at ``-f 1.02`` where the time
  track needs ``-f 1.4``. Counted in a fresh child (50 and 100 in one: ~40 s a commit).

Tiers select sizes with asv's ``-b 'name(params)'`` matching (vkbench/suite/tiers.py):
the gate never builds ``Blocks(400)``.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from vkbench.suite.catalogue import PHASES

from .common import (
    BLOCK_SIZES,
    WORK_PHASES,
    WORK_SIZES,
    cache_directory,
    note_inputs,
    quiet,
    require_import,
    require_vkbench,
    safe_import,
    shared_record,
    skip,
    suite_version,
    version_classes,
)

#: Sizes counted by one child (one import of torch and ExecuTorch instead of two): the gate's.
WORK_COUNTED_TOGETHER = (50, 100)

version = suite_version(__name__)  # asv: every benchmark here, a digest of the code its records run
scaling, _ = safe_import("vkbench.workloads.scaling")  # require_vkbench() reports a failure in setup
_lowering, _ = safe_import("vkbench.core.lowering")
timed_partition = getattr(_lowering, "timed_partition", None)

#: Edge programs this benchmark process built (asv re-runs ``setup`` per sample).
_PROGRAMS: dict[int, Any] = {}


def _record(directory: str, blocks: int, keep_program: bool = False) -> dict[str, Any]:
    """The size's record (:func:`~benchmarks.common.shared_record`); ``keep_program`` also
    leaves the edge program in :data:`_PROGRAMS`, built once in this process either way."""

    require_vkbench()
    quiet()

    def make() -> dict[str, Any]:
        point, program = scaling.measure_keeping_program(blocks)
        _PROGRAMS[blocks] = program
        note_inputs("bench_partition")
        return vars(point)

    record = shared_record(directory, f"blocks-{blocks}", make)
    if keep_program and blocks not in _PROGRAMS:  # recorded by another benchmark process
        _PROGRAMS[blocks] = scaling.blocks_edge_program(blocks)
    return record


class _Blocks:
    params = [BLOCK_SIZES]
    param_names = ["blocks"]
    timeout = 900

    def setup_cache(self) -> str:
        """The directory the records are shared through (asv's cache dir for this module)."""
        return cache_directory()


class PartitionScaling(_Blocks):
    rounds = 1
    number = 1
    warmup_time = 0.0
    min_run_count = 1
    repeat = 5  # samples per size; SAMPLES overrides per size in setup
    timer = time.process_time  # CPU seconds: steadier than wall time on a shared machine (docs/suite.md)
    #: Samples per size: the median of 4 (2 at 200) keeps `asv continuous -f 1.4` quiet on a loaded
    #: 2-core machine (docs/suite.md, Noise) and the gate tier near 5 min; 400 blocks take ~45 s CPU each.
    SAMPLES = {50: 4, 100: 4, 200: 2, 400: 1}

    def setup(self, directory: str, blocks: int) -> None:
        _record(directory, blocks, keep_program=True)
        self.repeat = self.SAMPLES.get(blocks, 1)
        self.program = copy.deepcopy(_PROGRAMS[blocks])

    def time_partition(self, directory: str, blocks: int) -> None:
        timed_partition(self.program)


class PartitionScalingRecord(_Blocks):
    """What the one instrumented partition per size found and cost."""

    def setup(self, directory: str, blocks: int) -> None:
        self.record = _record(directory, blocks)

    def track_partitions(self, directory: str, blocks: int) -> int:
        """Vulkan partitions found; more means more CPU<->GPU transitions."""
        return self.record["partitions"]

    track_partitions.unit = "partitions"

    def track_added_mb(self, directory: str, blocks: int) -> float:
        """Peak RSS during ``partition`` above the RSS before it."""
        return self.record["added_rss_mb"]

    track_added_mb.unit = "MiB"

    def track_to_edge_seconds(self, directory: str, blocks: int) -> float:
        """``torch.export`` + ``to_edge`` of ``Blocks(n)``: the program the partitioner gets."""
        return self.record["edge_seconds"]

    track_to_edge_seconds.unit = "seconds"

    def track_work_seconds(self, directory: str, blocks: int) -> float:
        """Wall seconds of the whole record (edge program + one instrumented partition)."""
        return self.record["work_seconds"]

    track_work_seconds.unit = "seconds"


class PartitionScalingPhases(_Blocks):
    """Seconds per phase of the record's partition, so a regression names its owner.

    ``propose_partitions`` is torch.fx; ``fusable_patterns`` and
    ``is_node_supported`` are ExecuTorch's Vulkan partitioner.
    """

    params = [BLOCK_SIZES, PHASES]
    param_names = ["blocks", "phase"]

    def setup(self, directory: str, blocks: int, phase: str) -> None:
        self.record = _record(directory, blocks)

    def track_phase_seconds(self, directory: str, blocks: int, phase: str) -> float:
        return self.record["phases"][phase]

    track_phase_seconds.unit = "seconds"


_work, _WORK_ERROR = safe_import("vkbench.workloads.partition_work")


class PartitionWork(_Blocks):
    """The partitioner's work on ``Blocks(n)`` per phase, counted: exact, so a 2 % step is real.

    One partition per size, counted in a fresh child (hash seed, torch threads and
    torch.fx node hashes made deterministic there): Python function starts + jumps
    per phase of :data:`~vkbench.suite.catalogue.PHASES`, and their ``total``.
    Follows the phase's CPU time across sizes (docs/suite.md); it is not a time.
    """

    params = [WORK_SIZES, WORK_PHASES]
    param_names = ["blocks", "phase"]

    def setup(self, directory: str, blocks: int, phase: str) -> None:
        require_import(_WORK_ERROR, "vkbench.workloads.partition_work")
        reason = _work.unavailable_reason()
        if reason is not None:
            skip(reason)

        together = [size for size in WORK_COUNTED_TOGETHER if size in WORK_SIZES]
        sizes = together if blocks in together else [blocks]

        def make() -> dict[str, Any]:
            try:
                counted = _work.count_partition_work(*sizes)
            except RuntimeError as error:  # stored, so the other phases do not count it again
                return {str(size): {"error": str(error)} for size in sizes}
            return {str(size): record for size, record in counted.items()}

        key = "work-" + "-".join(map(str, sizes))
        self.record = shared_record(directory, key, make)[str(blocks)]
        if "error" in self.record:
            raise RuntimeError(self.record["error"])

    def track_partition_events(self, directory: str, blocks: int, phase: str) -> int:
        """Python calls + jumps of the phase in one partition (``total``: the whole partition)."""
        return self.record["events"][phase]

    track_partition_events.unit = "events"


_fusion, _FUSION_ERROR = safe_import("vkbench.workloads.fusion")


def _without_horizontal_fusion_record(
    directory: str, blocks: int, keep_program: bool = False
) -> dict[str, Any]:
    """The size's record with torch.fx's horizontal fusion off, shared like :func:`_record`'s.

    Skips (asv) where :mod:`vkbench.workloads.fusion` cannot import or refuses the installed torch.
    ``keep_program`` leaves the edge program in :data:`_PROGRAMS`, built once in this process.
    """
    require_vkbench()
    reason = _FUSION_ERROR or _fusion.unpatchable_reason()
    if reason is not None:
        raise NotImplementedError(f"vkbench.workloads.fusion cannot patch here: {reason}")  # asv: skip

    def make() -> dict[str, Any]:
        _record(directory, blocks, keep_program=True)
        with _fusion.without_horizontal_fusion():
            partitions, phases = timed_partition(copy.deepcopy(_PROGRAMS[blocks]))
        return {"partitions": partitions, "phases": phases}

    record = shared_record(directory, f"blocks-{blocks}-without-horizontal-fusion", make)
    if keep_program:
        _record(directory, blocks, keep_program=True)
    return record


class PartitionWithoutHorizontalFusion(PartitionScaling):
    """What-if: ``PartitionScaling.time_partition`` with torch.fx's horizontal fusion off.

    The same timing (fresh copy of the edge program per sample, process CPU
    seconds) inside :func:`vkbench.workloads.fusion.without_horizontal_fusion`: what
    one user-side change to ``propose_partitions`` would save. On ``Blocks(n)``
    the partitions stay the same (``PartitionWithoutHorizontalFusionRecord``).
    Skips on a torch whose ``propose_partitions`` the patch was not checked
    against. Entering the patch (~5 ms: it checks and compiles torch's source)
    is inside the timing. Timer and samples are ``PartitionScaling``'s.
    """

    def setup(self, directory: str, blocks: int) -> None:
        _without_horizontal_fusion_record(directory, blocks, keep_program=True)
        self.repeat = self.SAMPLES.get(blocks, 1)
        self.program = copy.deepcopy(_PROGRAMS[blocks])

    def time_partition(self, directory: str, blocks: int) -> None:
        with _fusion.without_horizontal_fusion():
            timed_partition(self.program)


class PartitionWithoutHorizontalFusionRecord(_Blocks):
    """What the partition without horizontal fusion found (its own benchmark, so it builds no program)."""

    def setup(self, directory: str, blocks: int) -> None:
        self.record = _without_horizontal_fusion_record(directory, blocks)

    def track_partitions(self, directory: str, blocks: int) -> int:
        """Vulkan partitions without horizontal fusion; equal to ``PartitionScalingRecord``'s on Blocks(n)."""
        return self.record["partitions"]

    track_partitions.unit = "partitions"


version_classes(globals())  # asv: each class its own series (kept or restarted by evidence)
