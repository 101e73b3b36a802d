"""Lowering LeRobot policies: time, memory and how much stays on the CPU.

One parameter per policy entry of :mod:`vkbench.policies` (ACT's model, one
diffusion UNet step, ...). Exported programs come from the on-disk cache
(``$VKBENCH_CACHE`` or ``.asv/cache/exported``, keyed by the torch, executorch
and lerobot versions), so ``time_lower``/``peakmem_lower`` time lowering, not
export. ``setup_cache`` lowers each entry once for the ``track_*`` counts.
Entries that cannot be built, exported or lowered skip, with the stage and
the exception in the message.
"""

from __future__ import annotations

from typing import Any

from .common import quiet

try:
    from vkbench import policies as _policies
    from vkbench.lowering import lower as _lower
except Exception as error:  # noqa: BLE001 - any failure means "skip", with the reason
    _policies = _lower = None  # type: ignore[assignment]
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
        raise NotImplementedError(f"vkbench.policies cannot import here: {_IMPORT_ERROR}")


def _entry(name: str) -> Any:
    _require()
    entry = _policies.ENTRIES.get(name)
    if entry is None:
        raise NotImplementedError(f"{name} is not a policy entry at this commit")
    return entry


def _survey(names: list[str]) -> dict[str, dict[str, Any]]:
    """Row JSON per entry (``{"error": ...}`` when vkbench is missing or the entry unknown)."""
    quiet()
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            entry = _entry(name)
        except NotImplementedError as error:
            results[name] = {"status": "blocked", "stage": "import", "error": str(error)}
            continue
        results[name] = _policies.survey_entry(entry, use_cache=True).to_json()
    return results


class _PolicyLowering:
    param_names = ["entry"]
    number = 1
    repeat = 1
    processes = 1
    warmup_time = 0.0
    names: list[str] = []

    def setup_cache(self) -> dict[str, dict[str, Any]]:
        return _survey(self.names)

    def setup(self, rows: dict[str, dict[str, Any]], entry: str) -> None:
        quiet()
        row = rows[entry]
        if row.get("status") != "lowered":
            raise NotImplementedError(
                f"{entry} is blocked at {row.get('stage')}: {row.get('error_type', '')}: {row.get('error')}"
            )
        self.coverage = row["coverage"]
        self.exported = _policies.load_exported(entry)
        if self.exported is None:
            self.exported = _policies.exported_program(_entry(entry))

    def time_lower(self, rows: dict[str, dict[str, Any]], entry: str) -> None:
        _lower(None, (), exported=self.exported)

    def peakmem_lower(self, rows: dict[str, dict[str, Any]], entry: str) -> None:
        _lower(None, (), exported=self.exported)

    def track_cpu_ops(self, rows: dict[str, dict[str, Any]], entry: str) -> int:
        """Compute nodes left on the CPU (lower is better)."""
        return self.coverage["nodes_cpu"]

    track_cpu_ops.unit = "nodes"

    def track_vulkan_programs(self, rows: dict[str, dict[str, Any]], entry: str) -> int:
        """Delegated Vulkan programs; more means more CPU<->GPU transitions."""
        return self.coverage["vulkan_programs"]

    track_vulkan_programs.unit = "programs"

    def track_cpu_percent(self, rows: dict[str, dict[str, Any]], entry: str) -> float:
        """Share of compute nodes left on the CPU (lower is better)."""
        return self.coverage["cpu_percent"]

    track_cpu_percent.unit = "percent"


class PolicyLowering(_PolicyLowering):
    """ACT, Diffusion, TDMPC, VQ-BeT, SAC actor: minutes on 2 cores."""

    params = [FAST_ENTRIES]
    names = FAST_ENTRIES
    timeout = 1800  # setup_cache lowers all fast entries (~7 min on 2 cores); each lower < 3 min


class VLAPolicyLowering(_PolicyLowering):
    """Reduced VLAs and world-action models (built offline from local configs), hub-bound rows: long."""

    params = [VLA_ENTRIES]
    names = VLA_ENTRIES
    timeout = 3600
