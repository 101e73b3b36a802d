"""Lowering LeRobot policies: how much stays on the CPU, and what lowering costs.

One parameter per policy entry of :mod:`vkbench.policies` (ACT's model, one
diffusion UNet step, ...). Each class's ``setup_cache`` processes every entry
once per commit (its *record*); the ``track_*`` methods read it:

* ``PolicyCoverage`` (gate): export + ``to_edge`` + partition, no Vulkan code
  generation: the partitioner's counts for a few minutes of work.
* ``PolicyLowering`` / ``PolicyLoweringStages`` (standard): the full lowering:
  seconds per stage, memory, program size (the counts are the gate's).
* ``VLAPolicyLowering`` / ``VLAPolicyLoweringStages`` (full): the reduced VLAs,
  fully lowered, counts included.

Seconds and memory are ``track_`` values from that one instrumented lowering,
not asv ``time_``/``peakmem_`` re-runs (a lowering takes seconds to minutes).
Exported programs come from the on-disk cache (:mod:`vkbench.policies.cache`),
shared by every commit. Entries that cannot be built, exported or lowered
skip with the stage and the first error line; their work seconds still count.
"""

from __future__ import annotations

from typing import Any

from .common import quiet, skip

try:
    from vkbench import policies as _policies
except Exception as error:  # noqa: BLE001 - any failure means "skip", with the reason
    _policies = None  # type: ignore[assignment]
    _IMPORT_ERROR: str | None = f"{type(error).__name__}: {error}"
else:
    _IMPORT_ERROR = None

#: Fixed here, not read from the measured project, so the grid is the same for every commit.
FAST_ENTRIES = [
    "act/model",
    "diffusion/rgb_encoder",
    "diffusion/unet_step",
    "diffusion/sample_loop",
    "tdmpc/encoder",
    "tdmpc/pi",
    "tdmpc/dynamics",
    "tdmpc/q",
    "vqbet/rollout",
    "gaussian_actor/deterministic",
]
VLA_ENTRIES = [
    "pi0/prefix",
    "pi0/denoise_step",
    "pi05/prefix",
    "pi05/denoise_step",
    "pi0_fast/prefix",
    "smolvla/prefix",
    "smolvla/denoise_step",
    "xvla/prefix",
    "xvla/denoise_step",
    "multi_task_dit/encoder",
    "multi_task_dit/denoise_step",
    "groot/backbone",
    "groot/action_step",
    "eo1/prefix",
    "eo1/denoise_step",
    "evo1/embedder",
    "evo1/action_step",
    "vla_jepa/backbone",
    "vla_jepa/action_step",
    "lingbot_va/action_step",
    "lingbot_va/video_step",
    "wall_x/model",
    "fastwam/model",
    "molmoact2/model",
]


def _require() -> None:
    if _IMPORT_ERROR is not None:
        skip(f"vkbench.policies cannot import here: {_IMPORT_ERROR}")


def _survey(names: list[str], *, partition_only: bool) -> dict[str, dict[str, Any]]:
    """One row (JSON) per entry, each lowered once; unknown entries get a blocked row."""
    quiet()
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        entry = _policies.ENTRIES.get(name) if _IMPORT_ERROR is None else None
        if entry is None:
            why = _IMPORT_ERROR or f"{name} is not a policy entry at this commit"
            rows[name] = {"status": "blocked", "stage": "import", "error": why, "seconds": 0.0}
            continue
        rows[name] = _policies.survey_entry(entry, use_cache=True, partition_only=partition_only).to_json()
    return rows


def _coverage(rows: dict[str, dict[str, Any]], entry: str) -> dict[str, Any]:
    """The entry's coverage record, or asv's skip naming the stage and error that blocked it."""
    row = rows[entry]
    if row.get("status") != "lowered":
        skip(f"{entry} is blocked at {row.get('stage')}: {row.get('error_type', '')}: {row.get('error')}")
    return row["coverage"]


class _Lowered:
    """Benchmarks of a lowered entry; a blocked entry skips in ``setup`` (asv's skip), with its reason."""

    def setup(self, rows: dict[str, dict[str, Any]], entry: str, *stage: str) -> None:
        self.coverage = _coverage(rows, entry)


class _Counts(_Lowered):
    """How much of the entry the Vulkan partitioner takes (lower is better)."""

    def track_cpu_ops(self, rows: dict[str, dict[str, Any]], entry: str) -> int:
        """Compute nodes left on the CPU."""
        return self.coverage["nodes_cpu"]

    track_cpu_ops.unit = "nodes"

    def track_vulkan_programs(self, rows: dict[str, dict[str, Any]], entry: str) -> int:
        """Delegated Vulkan programs; more means more CPU<->GPU transitions."""
        return self.coverage["vulkan_programs"]

    track_vulkan_programs.unit = "programs"

    def track_cpu_percent(self, rows: dict[str, dict[str, Any]], entry: str) -> float:
        """Share of compute nodes left on the CPU."""
        return self.coverage["cpu_percent"]

    track_cpu_percent.unit = "percent"


class _Cost(_Lowered):
    """What the entry's one full lowering cost: seconds, memory, program size."""

    def track_lower_seconds(self, rows: dict[str, dict[str, Any]], entry: str) -> float:
        """to_edge + partition + preprocess + to_executorch (export excluded: it is cached)."""
        return round(sum(self.coverage["seconds"].values()), 4)

    track_lower_seconds.unit = "seconds"

    def track_added_mb(self, rows: dict[str, dict[str, Any]], entry: str) -> float:
        """Peak RSS during the lowering above the RSS before it."""
        return self.coverage["added_rss_mb"]

    track_added_mb.unit = "MiB"

    def track_program_kb(self, rows: dict[str, dict[str, Any]], entry: str) -> float:
        """Size of the ExecuTorch program (``.pte``)."""
        return round((self.coverage["program_bytes"] or 0) / 1024, 1)

    track_program_kb.unit = "KiB"


class _Stages(_Lowered):
    params = [FAST_ENTRIES, ["to_edge", "partition", "preprocess", "to_executorch"]]
    param_names = ["entry", "stage"]

    def track_stage_seconds(self, rows: dict[str, dict[str, Any]], entry: str, stage: str) -> float:
        """Seconds of one lowering stage, so a regression names the stage."""
        return self.coverage["seconds"][stage]

    track_stage_seconds.unit = "seconds"


class _Work:
    """The record's own cost, blocked entries included (no skip): what ``vkbench cost`` sums."""

    param_names = ["entry"]

    def track_work_seconds(self, rows: dict[str, dict[str, Any]], entry: str) -> float:
        """Wall seconds of the entry's record: build + export (on a cache miss) + lowering."""
        return rows[entry]["seconds"]

    track_work_seconds.unit = "seconds"


# -- gate: fast entries, partition only --------------------------------------------------------
class _FastCoverage:
    params = [FAST_ENTRIES]
    param_names = ["entry"]
    timeout = 1800  # setup_cache: ~2-3 min on 2 cores with the export cache warm

    def setup_cache(self) -> dict[str, dict[str, Any]]:
        return _survey(FAST_ENTRIES, partition_only=True)


class PolicyCoverage(_FastCoverage, _Counts):
    """Fast entries (ACT, Diffusion, TDMPC, VQ-BeT, SAC) exported and partitioned once, no codegen."""


class PolicyCoverageWork(_FastCoverage, _Work):
    pass


# -- standard: fast entries, full lowering -----------------------------------------------------
class _FastLowering:
    params = [FAST_ENTRIES]
    param_names = ["entry"]
    timeout = 1800  # setup_cache lowers all fast entries (~6 min on 2 cores)

    def setup_cache(self) -> dict[str, dict[str, Any]]:
        return _survey(FAST_ENTRIES, partition_only=False)


class PolicyLowering(_FastLowering, _Cost):
    """The fast entries fully lowered once each (the counts are the gate's)."""


class PolicyLoweringStages(_FastLowering, _Stages):
    params = _Stages.params
    param_names = _Stages.param_names


class PolicyLoweringWork(_FastLowering, _Work):
    pass


# -- full: reduced VLAs, full lowering ---------------------------------------------------------
class _VLALowering:
    params = [VLA_ENTRIES]
    param_names = ["entry"]
    timeout = 5400  # setup_cache lowers every reduced VLA (~25 min on 2 cores)

    def setup_cache(self) -> dict[str, dict[str, Any]]:
        return _survey(VLA_ENTRIES, partition_only=False)


class VLAPolicyLowering(_VLALowering, _Counts, _Cost):
    """Reduced VLAs and world-action models, built offline from local configs: counts and cost."""


class VLAPolicyLoweringStages(_VLALowering, _Stages):
    params = [VLA_ENTRIES, _Stages.params[1]]
    param_names = _Stages.param_names


class VLAPolicyLoweringWork(_VLALowering, _Work):
    pass
