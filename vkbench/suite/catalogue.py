"""The suite's catalogue: every benchmark of ``benchmarks/`` by name, and the fixed parameter grids.

``benchmarks/`` imports its grids from here and the readers (summary, cost,
the site, the changes table) name benchmarks through :class:`Benchmark`
constants, so the two cannot drift apart silently: ``tests/test_catalogue.py``
checks that every constant names a method asv discovers, with the grid the
catalogue says. Grids are fixed here, not read from the measured project,
so every commit shares one parameter product (asv compares values by
position in it).
"""

from __future__ import annotations

from dataclasses import dataclass

from vkbench.core.phases import PARTITIONER_PHASES

#: The op probes (:mod:`vkbench.workloads.probes` builds them; a test checks both lists agree).
PROBE_NAMES = [
    "linear_f32", "linear_bf16", "conv2d_batch1", "conv2d_batch2", "elu", "mish", "var",
    "conv_transpose1d", "index_put", "split_one_piece", "mha_cross", "index_dim1",
    "layer_norm_no_affine", "logical_not", "complex_rope", "inputless_partition", "empty_like_transposed",
    "bucketize", "conv2d_padding_valid", "rms_norm_one_plus_weight", "int32_to_bool", "div_0d",
    "group_norm_3d", "relower_unbacked", "clone_5d",
]
#: ``Blocks(n)`` sizes; the gate tier selects the first three (:mod:`vkbench.suite.tiers`).
BLOCK_SIZES = [50, 100, 200, 400]
#: The partitioner phases :mod:`vkbench.core.phases` clocks (named there).
PHASES = list(PARTITIONER_PHASES)
#: ``Blocks(n)`` sizes whose partitioner work is counted (:mod:`vkbench.workloads.partition_work`);
#: the gate tier selects the first two. 400 is left out: its count alone would take minutes.
WORK_SIZES = [50, 100, 200]
#: The counted phases: :data:`PHASES`, ``pattern_graphs`` and their sum. ``pattern_graphs`` is the
#: part of ``fusable_patterns`` the registered graph patterns cost (building their graphs, matching
#: them): a new pattern steps it, and ``vkbench gate`` judges the other phases net of it.
WORK_PHASES = [*PHASES, "pattern_graphs", "total"]
#: Lowering stages timed per policy entry.
STAGES = ["to_edge", "partition", "preprocess", "to_executorch"]
#: The fast LeRobot entries (gate and standard tiers).
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
    "vqbet/rgb_encoder",
    "vqbet/gpt",
    "vqbet/action_head",
    "gaussian_actor/deterministic_without_chunk",
]
#: The reduced VLAs and world-action models (full tier).
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
    "lingbot_va/action_step_real_rope",
    "lingbot_va/video_step_real_rope",
    "wall_x/prefix",
    "wall_x/denoise_step",
    "wall_x/denoise_step_without_guards",
    "fastwam/model",
    "molmoact2/model",
    "fastwam/text_encoder",
    "fastwam/vae_encoder",
    "fastwam/video_prefill",
    "fastwam/action_step",
    "fastwam/text_encoder_masked_zeroing",
    "fastwam/video_prefill_real_rope",
    "fastwam/action_step_real_rope",
    "molmoact2/prefix",
    "molmoact2/prefix_fixed_layout",
    "molmoact2/denoise_step",
]
#: Runtime grids.
RUNTIME_ENTRIES = ["act/model", "tdmpc/encoder", "tdmpc/pi", "tdmpc/dynamics", "tdmpc/q"]
RUNTIME_BACKENDS = ["vulkan", "xnnpack", "portable"]
RUNNERS = ["python", "native"]
MANY_SIZES = [500, 1000, 1500, 2000, 4000]
PROBE_WORKLOADS = [f"probe/{name}" for name in PROBE_NAMES]


@dataclass(frozen=True)
class Benchmark:
    """One asv benchmark (``module.Class.method``) and the parameter names of its grid."""

    module: str
    cls: str
    method: str
    param_names: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.module}.{self.cls}.{self.method}"

    @property
    def class_name(self) -> str:
        return f"{self.module}.{self.cls}"

    def __str__(self) -> str:
        return self.name


def _b(module: str, cls: str, method: str, *param_names: str) -> Benchmark:
    return Benchmark(module, cls, method, param_names)


# -- probes (bench_probes) ---------------------------------------------------------------------
PROBE_CPU_OPS = _b("bench_probes", "ProbeCoverage", "track_cpu_ops", "case")
PROBE_PROGRAMS = _b("bench_probes", "ProbeCoverage", "track_vulkan_programs", "case")
PROBE_SHARE = _b("bench_probes", "ProbeCoverage", "track_cpu_node_share", "case")
PROBE_OP_SHARE = _b("bench_probes", "ProbeCoverage", "track_cpu_op_type_share", "case")
#: ExecuTorch's own counts (``get_delegation_info``), recorded beside vkbench's.
PROBE_ET_DELEGATED = _b("bench_probes", "ProbeCoverage", "track_et_delegated_nodes", "case")
PROBE_ET_NON_DELEGATED = _b("bench_probes", "ProbeCoverage", "track_et_non_delegated_nodes", "case")
PROBE_FAILED = _b("bench_probes", "ProbeFailure", "track_lowering_failed", "case")
PROBE_WORK = _b("bench_probes", "ProbeWork", "track_work_seconds", "case")

# -- partition scaling (bench_partition) -------------------------------------------------------
PARTITION_TIME = _b("bench_partition", "PartitionScaling", "time_partition", "blocks")
PARTITION_COUNT = _b("bench_partition", "PartitionScalingRecord", "track_partitions", "blocks")
PARTITION_WORK = _b("bench_partition", "PartitionScalingRecord", "track_work_seconds", "blocks")
PARTITION_PHASES = _b("bench_partition", "PartitionScalingPhases", "track_phase_seconds", "blocks", "phase")
PARTITION_TO_EDGE = _b("bench_partition", "PartitionScalingRecord", "track_to_edge_seconds", "blocks")
PARTITION_ADDED_MB = _b("bench_partition", "PartitionScalingRecord", "track_added_mb", "blocks")
PARTITION_EVENTS = _b("bench_partition", "PartitionWork", "track_partition_events", "blocks", "phase")
UNFUSED_TIME = _b("bench_partition", "PartitionWithoutHorizontalFusion", "time_partition", "blocks")
UNFUSED_COUNT = _b("bench_partition", "PartitionWithoutHorizontalFusionRecord", "track_partitions", "blocks")

# -- policies (bench_policies) -----------------------------------------------------------------
POLICY_CPU_OPS = _b("bench_policies", "PolicyPartition", "track_cpu_ops", "entry")
POLICY_PROGRAMS = _b("bench_policies", "PolicyPartition", "track_vulkan_programs", "entry")
POLICY_CPU_PERCENT = _b("bench_policies", "PolicyPartition", "track_cpu_percent", "entry")
POLICY_OP_SHARE = _b("bench_policies", "PolicyPartition", "track_cpu_op_type_share", "entry")
POLICY_ET_DELEGATED = _b("bench_policies", "PolicyPartition", "track_et_delegated_nodes", "entry")
POLICY_ET_NON_DELEGATED = _b("bench_policies", "PolicyPartition", "track_et_non_delegated_nodes", "entry")
POLICY_WORK = _b("bench_policies", "RecordCostPolicyPartition", "track_work_seconds", "entry")
POLICY_LOWER_SECONDS = _b("bench_policies", "PolicyLowering", "track_lower_seconds", "entry")
POLICY_ADDED_MB = _b("bench_policies", "PolicyLowering", "track_added_mb", "entry")
POLICY_PROGRAM_KB = _b("bench_policies", "PolicyLowering", "track_program_kb", "entry")
POLICY_STAGE_SECONDS = _b("bench_policies", "PolicyLoweringStages", "track_stage_seconds", "entry", "stage")
POLICY_LOWERING_WORK = _b("bench_policies", "RecordCostPolicyLowering", "track_work_seconds", "entry")
VLA_CPU_OPS = _b("bench_policies", "VLAPolicyLowering", "track_cpu_ops", "entry")
VLA_PROGRAMS = _b("bench_policies", "VLAPolicyLowering", "track_vulkan_programs", "entry")
VLA_CPU_PERCENT = _b("bench_policies", "VLAPolicyLowering", "track_cpu_percent", "entry")
VLA_OP_SHARE = _b("bench_policies", "VLAPolicyLowering", "track_cpu_op_type_share", "entry")
VLA_ET_DELEGATED = _b("bench_policies", "VLAPolicyLowering", "track_et_delegated_nodes", "entry")
VLA_ET_NON_DELEGATED = _b("bench_policies", "VLAPolicyLowering", "track_et_non_delegated_nodes", "entry")
VLA_WORK = _b("bench_policies", "RecordCostVLAPolicyLowering", "track_work_seconds", "entry")
VLA_LOWER_SECONDS = _b("bench_policies", "VLAPolicyLowering", "track_lower_seconds", "entry")
VLA_ADDED_MB = _b("bench_policies", "VLAPolicyLowering", "track_added_mb", "entry")
VLA_PROGRAM_KB = _b("bench_policies", "VLAPolicyLowering", "track_program_kb", "entry")
VLA_STAGE_SECONDS = _b("bench_policies", "VLAPolicyLoweringStages", "track_stage_seconds", "entry", "stage")

# -- runtime (bench_runtime, bench_policy_runtime) ---------------------------------------------
MANY_EXECUTE = _b("bench_runtime", "ManyRuntime", "track_execute_seconds", "n", "runner")
MANY_PER_DISPATCH = _b("bench_runtime", "ManyRuntime", "track_us_per_dispatch", "n", "runner")
MANY_DIFF = _b("bench_runtime", "ManyRuntime", "track_max_abs_diff", "n", "runner")
MANY_EAGER = _b("bench_runtime", "ManyEager", "time_eager", "n")
STEP_LIMIT = _b("bench_runtime", "StepLimit", "track_steps_short_of_cap", "runner")
PROBE_LADDER = _b("bench_runtime", "ProbeLadder", "track_rungs_short", "probe", "runner")
POLICY_FORWARD = _b("bench_policy_runtime", "PolicyRuntime", "track_forward_seconds", "entry", "backend",
                    "runner")
POLICY_DIFF = _b("bench_policy_runtime", "PolicyRuntime", "track_max_abs_diff", "entry", "backend", "runner")
POLICY_EAGER = _b("bench_policy_runtime", "PolicyEager", "time_forward", "entry")
POLICY_LADDER = _b("bench_policy_runtime", "PolicyLadder", "track_rungs_short", "entry", "runner")
VLA_LADDER = _b("bench_policy_runtime", "VLAPolicyLadder", "track_rungs_short", "entry", "runner")

#: The per-commit coverage tracks the history charts and the changes table follow:
#: (kind of workload, benchmark); lower is better for all.
COUNT_TRACKS: tuple[tuple[str, Benchmark], ...] = (
    ("probe", PROBE_CPU_OPS), ("probe", PROBE_PROGRAMS), ("probe", PROBE_FAILED),
    ("probe", PROBE_SHARE), ("probe", PROBE_OP_SHARE),
    ("policy", POLICY_CPU_OPS), ("policy", POLICY_PROGRAMS), ("policy", POLICY_OP_SHARE),
    ("policy", VLA_CPU_OPS), ("policy", VLA_PROGRAMS), ("policy", VLA_OP_SHARE),
)
#: The benchmark whose skip means "this workload does not lower here", per counted class.
LOWERS = {PROBE_CPU_OPS.class_name: PROBE_CPU_OPS, POLICY_CPU_OPS.class_name: POLICY_CPU_OPS,
          VLA_CPU_OPS.class_name: VLA_CPU_OPS}

#: Benchmarks the suite no longer has: only the migration that moves their recorded results onto
#: today's classes (:mod:`vkbench.execution.legacy`) may name them.
RETIRED = frozenset({
    "bench_runtime.ManyVulkan.time_execute", "bench_runtime.ManyVulkan.track_max_abs_diff",
    "bench_runtime.ManyNative.track_execute", "bench_runtime.ManyNative.track_us_per_dispatch",
    "bench_runtime.ManyNative.track_max_abs_diff", "bench_runtime.StepLimitNative.track_steps_short_of_cap",
    "bench_policy_runtime.PolicyRuntime.time_forward", "bench_policy_runtime.PolicyNative.track_forward",
    "bench_policy_runtime.PolicyNative.track_max_abs_diff",
})

ALL: tuple[Benchmark, ...] = tuple(v for v in dict(globals()).values() if isinstance(v, Benchmark))
