"""The bug list: every distinct failure vkbench records, in a form someone can act on without vkbench.

A *row* is one failure (a stage and a normalized error) with what it blocks, who would fix it, the
probe that tracks it per commit and a standalone reproducer (``repro/<id>.py``: torch and executorch
only). What does not change with the data is written once, in :data:`BUGS` (owner, probe, reproducer,
how to recognise the failure in a recorded error, what the investigation found); what does is
computed from the committed results every time:

* the entries a lowering failure blocks, from the newest ``results/policies/*.json`` (a blocked
  entry's stage and error; ``default_blocker`` for entries lowered only with a non-Core-ATen op let
  through; ``blocked_with_allowed`` for what blocks them after that);
* the coverage a workaround reaches (an entry's rewrite, or the entry itself with the op let through);
* the entries a runtime failure stops, checked against the ladder (``results/releases``: an entry
  listed for a load error must stop at load there); an entry the ladder stops at load that no row
  names lands in :data:`UNRECORDED_LOAD`;
* ``first_bad``/``fixed_in``, from the probe's per-commit record (``results/upstream`` and the release
  results; main in the order of its classes): where its failure starts and stops inside the recorded range.

A blocked entry that matches no row gets a row of its own, keyed by stage and normalized error
(owner ``not classified``), so a new failure shows up here before anyone writes its row.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.results.ladder import LADDERS, rung_name
from vkbench.results.records import Recorded, read_recorded
from vkbench.results.repro_runs import ReproRecord
from vkbench.results.surveys import latest_path
from vkbench.suite import catalogue

PARTITIONER = "ExecuTorch Vulkan partitioner"
RUNTIME = "Vulkan runtime"
EXIR = "exir/serialization"
TORCH_EXPORT = "torch.export"
LEROBOT = "LeRobot model code"
VKBENCH = "vkbench's own build of the policy"
NOT_RECORDED = "not recorded"
NOT_CLASSIFIED = "not classified"
#: Every owner a row can have, in the order summaries list them.
OWNERS = (PARTITIONER, RUNTIME, EXIR, TORCH_EXPORT, LEROBOT, VKBENCH, NOT_RECORDED, NOT_CLASSIFIED)
#: Owners whose rows must carry a probe and a reproducer (ExecuTorch's and torch's).
UPSTREAM = (PARTITIONER, RUNTIME, EXIR, TORCH_EXPORT)

#: What a reproducer needs, by where its failure happens.
PINNED = "torch 2.11.0 + executorch 1.5.1 from PyPI (lowering only)"
EXPORT_ONLY = "torch 2.11.0 (torch.export only)"
VULKAN_BUILD = "a Vulkan-enabled ExecuTorch (vkbench build full; docs/runtime.md)"
#: Stages of building and lowering an entry (``vkbench.core.lowering.STAGES`` after ``build``).
LOWERING_STAGES = ("build", "export", "to_edge", "partition", "preprocess", "to_executorch")
#: Stages at which a failure happens while running the program.
RUNTIME_STAGES = ("load", "run")


@dataclass(frozen=True)
class Bug:
    """The static facts of one row.

    ``pattern`` is searched (case-sensitive) in a recorded block, written ``stage: Type: message``;
    ``only`` limits it to some entries (a ``GuardOnDataDependentSymNode`` names no code location, so
    export rows name the entries whose traceback was read). ``recorded`` lists, for a runtime row,
    the entries whose error line ``docs/runtime.md`` records. ``history`` says how the probe's
    per-commit record shows the failure: ``fails`` (``ProbeFailure.track_lowering_failed`` is 1) or
    ``whole`` (the probe lowers with no CPU op left: the runtime is handed the op).
    """

    id: str
    stage: str
    error: str
    owner: str
    pattern: str = ""
    only: tuple[str, ...] = ()
    recorded: tuple[str, ...] = ()
    workarounds: tuple[str, ...] = ()
    probe: str = ""
    repro: str = ""
    needs: str = ""
    history: str = ""
    note: str = ""

    @property
    def build(self) -> str:
        """What the reproducer needs to run."""
        if self.needs:
            return self.needs
        if self.stage in RUNTIME_STAGES:
            return VULKAN_BUILD
        return EXPORT_ONLY if self.stage == "export" else PINNED


def _repro(bug_id: str) -> str:
    return f"repro/{bug_id}.py"


_GUARD = "export: GuardOnDataDependentSymNode"
_REWRITE = "what-if row: the entry's rewrite (notes 'rewrite: ...') lowers"

BUGS: tuple[Bug, ...] = (
    # -- export: data-dependent Python in the model code (tracebacks read on torch 2.11.0) ----------
    Bug("export_ddpm_previous_timestep", "export",
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression (diffusers "
        "DDPMScheduler.previous_timestep: the timestep's index by nonzero)", LEROBOT,
        _GUARD, only=("diffusion/sample_loop",), repro=_repro("export_ddpm_previous_timestep"),
        note="not vkbench's configuration: LeRobot's conditional_sample always calls set_timesteps, so the "
             "default DDPM scheduler takes this branch whatever num_inference_steps is, and the DDIM "
             "scheduler fails too (checked: 'Could not extract specialized integer', an .item() in its "
             "step); stays"),
    Bug("export_qwen_vl_rope_index", "export",
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression (transformers "
        "Qwen-VL get_rope_index: itertools.groupby over input_token_type.tolist())", LEROBOT,
        _GUARD, only=("eo1/prefix", "groot/backbone"), repro=_repro("export_qwen_vl_rope_index"),
        note="Qwen2.5-VL (EO-1) and Qwen3-VL (GR00T, through lerobot's _ensure_legacy_qwen3_position_ids); "
             "the entry could take the M-RoPE position ids as inputs, as eo1/denoise_step does (vkbench's "
             "entry boundary); not done, stays"),
    Bug("export_qwen3_vl_pos_embed", "export",
        "GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression "
        "(transformers Qwen3-VL fast_pos_embed_interpolate: linspace over grid_thw.tolist())", LEROBOT,
        _GUARD, only=("vla_jepa/backbone",), repro=_repro("export_qwen3_vl_pos_embed")),
    Bug("export_qwen2_5_vl_window_index", "export",
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression (transformers "
        "Qwen2.5-VL get_window_index: window counts from grid_thw, cu_seqlens_tmp.tolist())", LEROBOT,
        _GUARD, only=("wall_x/prefix",), repro=_repro("export_qwen2_5_vl_window_index")),
    Bug("export_molmoact2_batched_images", "export",
        "GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression "
        "(lerobot MolmoAct2 build_batched_images: int(raw_counts.sum().item()))", LEROBOT,
        _GUARD, only=("molmoact2/prefix",), workarounds=("molmoact2/prefix_fixed_layout",),
        repro=_repro("export_molmoact2_batched_images"), note=_REWRITE),
    Bug("export_fastwam_prompt_zeroing", "export",
        "GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression "
        "(lerobot FastWAM encode_prompt: prompt_emb[i, v:] = 0 per prompt length)", LEROBOT,
        _GUARD, only=("fastwam/text_encoder",), workarounds=("fastwam/text_encoder_masked_zeroing",),
        repro=_repro("export_fastwam_prompt_zeroing"),
        note="the masked rewrite exports, then stops at preprocess (row preprocess_inputless_partition)"),
    Bug("export_fastwam_rope_grid", "export",
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression (lerobot FastWAM "
        "rope_apply: frequency tables sliced by grid_sizes.tolist())", LEROBOT,
        _GUARD, only=("fastwam/video_prefill",), workarounds=("fastwam/video_prefill_real_rope",),
        repro=_repro("export_fastwam_rope_grid"), note=_REWRITE),
    Bug("export_wall_x_action_assert", "export",
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression (lerobot WALL-OSS "
        "predict: assert action_mask.any(); the MoE block's if mask.sum() == 0)", LEROBOT,
        _GUARD, only=("wall_x/denoise_step",), workarounds=("wall_x/denoise_step_without_guards",),
        repro=_repro("export_wall_x_action_assert"), note=_REWRITE),
    # -- build ---------------------------------------------------------------------------------------
    Bug("build_hub_offline", "build",
        "the policy's __init__ loads weights from the Hugging Face hub (OSError / LocalEntryNotFoundError "
        "offline)", VKBENCH, r"^build: (OSError|LocalEntryNotFoundError): ",
        note="stays: vkbench builds every policy offline from local configs with random weights (no "
             "network in CI, released weights are gigabytes); FastWAM's hub id is hard-coded "
             "(WAN22_DIFFUSERS_MODEL_ID), MolmoAct2's checkpoint_path defaults to one; the fastwam/* and "
             "molmoact2/* entries build the same networks from local configs"),
    # -- to_edge -------------------------------------------------------------------------------------
    Bug("to_edge_view_as_complex_grad", "to_edge",
        "RuntimeError: view_as_complex_copy does not support automatic differentiation for outputs with "
        "complex dtype", EXIR, "view_as_complex_copy does not support automatic differentiation",
        workarounds=("fastwam/action_step_real_rope", "lingbot_va/action_step_real_rope",
                     "lingbot_va/video_step_real_rope"),
        probe="complex_rope", repro=_repro("to_edge_view_as_complex_grad"), history="fails",
        note="to_edge_transform_and_lower re-runs the graph with views replaced by view-copies with "
             "autograd on; a complex view of a tensor that comes from a parameter fails there (no "
             "partitioner needed). The real-RoPE rewrites (cos/sin on (re, im) pairs) lower"),
    Bug("to_edge_non_core_no_kernel", "to_edge",
        "SpecViolationError: Operator aten.bucketize.Tensor / aten.multinomial.default is not in Core ATen "
        "opset", EXIR, r"Operator torch\._ops\.aten\.(bucketize|multinomial)\.\w+ is not in Core ATen",
        probe="bucketize", repro=_repro("to_edge_non_core_no_kernel"), history="fails",
        note="neither op has a decomposition into Core ATen nor an ExecuTorch kernel: letting it through "
             "to_edge (what vkbench does, as the message suggests) lowers it to the CPU, but the program "
             "cannot load (OperatorMissing, as in row load_operator_missing_empty_permuted)"),
    Bug("to_edge_empty_permuted", "to_edge",
        "SpecViolationError: Operator aten.empty_permuted.default is not in Core ATen opset (to_edge's "
        "own decomposition of empty_like on a non-contiguous tensor)", EXIR,
        r"Operator torch\._ops\.aten\.empty_permuted\.default is not in Core ATen",
        probe="empty_like_transposed", repro=_repro("to_edge_empty_permuted"), history="fails",
        note="the exported graph holds aten.empty_like; ExecuTorch's decomposition emits empty_permuted, "
             "which its verifier refuses and no kernel implements; smolvla/prefix meets it next, once "
             "bucketize is let through"),
    Bug("to_edge_pending_unbacked_retry", "to_edge",
        "PendingUnbackedSymbolNotFound: Pending unbacked symbols ... not in returned outputs (a second "
        "to_edge_transform_and_lower of the same ExportedProgram)", EXIR, "PendingUnbackedSymbolNotFound",
        probe="relower_unbacked", repro=_repro("to_edge_pending_unbacked_retry"), history="fails",
        note="any graph with a data-dependent size shows it on its second lowering (the probe lowers its "
             "exported program twice). vkbench met it because its non-Core-ATen retry lowered the same "
             "exported program again; the retry now lowers a fresh export (vkbench.core.lowering), and "
             "smolvla/prefix lowers with bucketize and empty_permuted on the CPU (which then cannot load)"),
    # -- partition / preprocess ----------------------------------------------------------------------
    Bug("partition_split_one_piece", "partition",
        "AttributeError: 'list' object has no attribute 'shape' (utils.filter_invalid_reprs on a one-piece "
        "split_with_sizes_copy)", PARTITIONER, r"^partition: AttributeError: 'list' object has no attribute",
        workarounds=("gaussian_actor/deterministic_without_chunk",), probe="split_one_piece",
        repro=_repro("partition_split_one_piece"), history="fails",
        note="SAC's one-camera torch.chunk(features, 1); " + _REWRITE),
    Bug("preprocess_inputless_partition", "preprocess",
        "Exception: An error occurred when running the 'FuseBatchNormPass' pass (two fake modes: a Vulkan "
        "partition with no tensor inputs)", PARTITIONER, "FuseBatchNormPass",
        probe="inputless_partition", repro=_repro("preprocess_inputless_partition"), history="fails",
        note="Vulkan's AOT side: the partitioner proposes a partition with no inputs (arange, mul), and "
             "preprocess's FuseBatchNormPass (an exir ExportPass) makes a new FakeTensorMode for it; "
             "recomputing the range constraints then finds two"),
    Bug("preprocess_flatc_infinity", "preprocess",
        "CalledProcessError: flatc: schema.json: error: cannot parse value starting with: - (Vulkan's "
        "serializer writes -Infinity)", EXIR, "cannot parse value starting with: -",
        probe="mha_cross", repro=_repro("preprocess_flatc_infinity"), history="fails",
        note="a failure of the recorded history, fixed on 1.5.1 (exir/_serialize/_flatbuffer.py rewrites "
             "non-finite floats before flatc): it blocked pi0/prefix on main (checked at cff6f4dd) and the "
             "mha_cross probe (act/model's attention); the reproducer's --unfixed shows it"),
    # -- load / run (errors from docs/runtime.md: ExecuTorch cff6f4dd's Vulkan runtime over the 1.5.1
    #    wheel, lavapipe and H200 alike) ---------------------------------------------------------------
    Bug("load_make_ivec2", "load", "VecUtils.h:367 make_ivec2: (ints.size() == 2)", RUNTIME,
        recorded=("pi0/prefix", "pi05/prefix", "pi0_fast/prefix"),
        probe="conv2d_padding_valid", repro=_repro("load_make_ivec2"), history="whole",
        note="SigLIP's patch embedding, Conv2d(padding='valid') (aten.conv2d.padding): conv -> "
             "create_kernel2d_params -> make_ivec2_from_list gets a list of another length (gdb on "
             "pi0/prefix's program); padding=0 loads"),
    Bug("load_prepack_val_is_tref", "load", "Staging.cpp:229 prepack_standard: val_is_tref", RUNTIME,
        recorded=("pi0/denoise_step", "pi05/denoise_step"),
        probe="rms_norm_one_plus_weight", repro=_repro("load_prepack_val_is_tref"), history="whole",
        note="Gemma's RMSNorm multiplies by (1 + weight): the fused rms_norm gets that computed tensor as "
             "its weight and add_rms_norm_node prepacks it as a constant (gdb on pi0/denoise_step)"),
    Bug("load_view_convert_int32_uint8", "load",
        "ShaderRegistry.cpp:51: no ShaderInfo view_convert_buffer_int32_uint8", RUNTIME,
        recorded=("multi_task_dit/encoder", "eo1/denoise_step", "evo1/embedder",
                  "wall_x/denoise_step_without_guards"),
        probe="int32_to_bool", repro=_repro("load_view_convert_int32_uint8"), history="whole",
        note="an int32 tensor's .to(torch.bool) becomes a delegated _to_dim_order_copy; to_dim_order_copy "
             "-> add_view_copy_convert_node finds no int32 -> uint8 shader (gdb on eo1/denoise_step)"),
    Bug("load_layer_norm_no_weight", "load",
        "NativeLayerNorm.cpp:95: native_layer_norm requires weight to be non-None", RUNTIME,
        recorded=("multi_task_dit/denoise_step", "lingbot_va/action_step_real_rope",
                  "lingbot_va/video_step_real_rope"),
        probe="layer_norm_no_affine", repro=_repro("load_layer_norm_no_weight"), history="whole"),
    Bug("load_missing_logical_not", "load",
        "VulkanBackend.cpp:480 Missing operator: aten.logical_not.default (aborts the process)", RUNTIME,
        recorded=("xvla/prefix", "xvla/denoise_step"),
        probe="logical_not", repro=_repro("load_missing_logical_not"), history="whole"),
    Bug("load_range_check", "load", "vector::_M_range_check: __n (18446744073709551615)", RUNTIME,
        recorded=("groot/action_step", "vla_jepa/action_step"),
        probe="div_0d", repro=_repro("load_range_check"), history="whole",
        note="a binary op on a 0-d tensor (GR00T's log(10000) / half_dim): div -> check_binary_op_args -> "
             "calculate_broadcasted_output_size indexes the empty size list at -1 (gdb on "
             "groot/action_step)"),
    Bug("load_is_tensor_ref", "load",
        "Value.h:262 isTensorRef: Expected value to have type TensorRef, got TENSOR", RUNTIME,
        recorded=("evo1/action_step", "act/model"),
        probe="mha_cross", repro=_repro("load_is_tensor_ref")),
    Bug("load_index_tensor_one_index", "load",
        "IndexTensor.cpp:76: index.Tensor: only one index tensor is supported", RUNTIME,
        recorded=("vqbet/rollout",),
        probe="index_dim1", repro=_repro("load_index_tensor_one_index"), history="whole",
        note="the partitioner delegates t[:, idx] (indices [None, idx]) since 1.5.1; the runtime takes one "
             "index on dim 0 only"),
    Bug("load_operator_missing_empty_permuted", "load",
        "Method load failed: error 20 (OperatorMissing: aten::empty_permuted.out)", EXIR,
        recorded=("smolvla/denoise_step",), repro=_repro("load_operator_missing_empty_permuted"),
        probe="empty_like_transposed",
        needs="torch 2.11.0 + executorch 1.5.1 from PyPI (the op is on the CPU; loading needs no Vulkan)",
        note="the program holds empty_permuted only because vkbench let it through to_edge (row "
             "to_edge_empty_permuted); no portable kernel implements it (the entry's only CPU op without "
             "one). Its probe's lowering record shows the to_edge row; its runtime ladder rung (the ladder "
             "lets non-Core-ATen ops through, as the survey does) shows this one: lowered, stops at load"),
    Bug("run_unet_step_garbage", "run",
        "runs, output not eager's: max abs diff 3.4e38, SNR -777 dB (lavapipe and H200 alike)", RUNTIME,
        recorded=("diffusion/unet_step",),
        probe="group_norm_3d", repro=_repro("run_unet_step_garbage"), history="whole",
        note="GroupNorm on an (N, C, L) input returns NaN on Vulkan (4-D inputs are right); the UNet's "
             "Conv1d -> GroupNorm -> Mish blocks carry it to the output. Found by `vkbench runtime "
             "culprit diffusion/unet_step --diverges` (lowering with subsets of its 17 delegated op types)"),
)
#: The row for entries the ladder stops at load whose error line no row records.
UNRECORDED_LOAD = Bug("load_unrecorded", "load", "load failed; the error line was not recorded",
                      NOT_RECORDED,
                      note="the ladder (asv) stores the rung, not the error; `vkbench runtime run ENTRY "
                           "--runner native --backend vulkan` on a Vulkan build names it")


@dataclass
class BugRow:
    """One row of the bug list: :class:`Bug`'s facts plus what the results say about it."""

    id: str
    stage: str
    error: str
    owner: str
    entries: list[str]
    probe: str
    repro: str
    first_bad: str = ""
    fixed_in: str = ""
    last_good: str = ""
    history: str = ""
    build: str = ""
    note: str = ""
    what_if: list[dict[str, Any]] = field(default_factory=list)
    probe_rungs: dict[str, str] = field(default_factory=dict)
    #: Per machine record (``results/bugs/repro-runs-*.json``): did the reproducer show it, and the line.
    repro_runs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def upstream(self) -> bool:
        """Owned by ExecuTorch or torch: must carry a probe and a reproducer."""
        return self.owner in UPSTREAM

    def to_json(self) -> dict[str, Any]:
        """The keys ``vkbench bugs --json`` promises first, then the rest."""
        return {"id": self.id, "stage": self.stage, "error": self.error, "owner": self.owner,
                "entries": self.entries, "probe": self.probe, "repro": self.repro,
                "first_bad": self.first_bad, "fixed_in": self.fixed_in, "last_good": self.last_good,
                "history": self.history, "build": self.build, "note": self.note, "what_if": self.what_if,
                "probe_rungs": self.probe_rungs, "repro_runs": self.repro_runs}


# -- reading the results ------------------------------------------------------------------------------

def latest_policies(results_root: Path = RESULTS_ROOT) -> Path | None:
    """The newest ExecuTorch's ``results/policies`` file (None when none is committed)."""
    return latest_path(results_root)


def _recorded(results: Recorded | Path) -> Recorded:
    """``results`` itself, or everything recorded under the folder it names, read once."""
    return results if isinstance(results, Recorded) else read_recorded(Path(results))


def ladder(results: Recorded | Path = RESULTS_ROOT) -> dict[str, dict[str, str]]:
    """``entry (or probe/<name>) -> "machine (runner)" -> rung reached``, from ``results/releases``."""
    found: dict[str, dict[str, str]] = {}
    for record in _recorded(results).releases.files:
        for benchmark in LADDERS:
            for point in record.points(benchmark.name):
                if point.value is not None:
                    entry, runner = point.params
                    found.setdefault(entry, {})[f"{record.machine} ({runner})"] = rung_name(point.value)
    return found


@dataclass(frozen=True)
class HistoryPoint:
    """One recorded commit of one probe: whether its lowering failed and what it left on the CPU."""

    label: str
    failed: bool
    cpu_ops: float | None


def _release_labels(recorded: Recorded) -> dict[str, str]:
    """Ledger commit -> ``<upstream commit> (v<version>)``: release results are filed under ledger commits."""
    return {r.commit: f"{(r.git_version or '')[:8]} (v{r.short_version})".lstrip()
            for r in recorded.ledger if r.commit}


def probe_history(probe: str, results: Recorded | Path = RESULTS_ROOT) -> list[HistoryPoint]:
    """The probe's record on every commit that holds it, oldest first (upstream and release results).

    Main commits go in the order of their classes (``results/history/classes-gate.json``: asv's
    commit dates are not first-parent order), release results by date among them.
    """
    recorded = _recorded(results)
    releases = _release_labels(recorded)
    classes = recorded.classes
    position = {c: i for i, k in enumerate(classes.classes) for c in k.commits} if classes else {}
    dated: dict[str, tuple[int, int, HistoryPoint]] = {}
    for found in (recorded.upstream, recorded.releases):
        for record in found.files:
            failed = record.values(catalogue.PROBE_FAILED.name).get((probe,))
            if failed is None:
                continue
            tag = record.sidecar.provenance.release
            short = record.commit[:8]
            label = releases.get(record.commit) or (f"{short} ({tag})" if tag else short)
            cpu = record.values(catalogue.PROBE_CPU_OPS.name).get((probe,))
            key = label.split(" ")[0]  # one upstream commit, however many result files hold it
            if key not in dated or record.date < dated[key][0]:
                point = HistoryPoint(label, bool(failed), cpu)
                dated[key] = (record.date, position.get(record.commit, -1), point)
    # along the main line, a commit is no older than any commit of an earlier class
    main = sorted((item for item in dated.values() if item[1] >= 0), key=lambda item: item[1])
    latest = 0
    order: list[tuple[int, int, HistoryPoint]] = []
    for date, index, point in main:
        latest = max(latest, date)
        order.append((latest, index, point))
    order += [item for item in dated.values() if item[1] < 0]
    return [point for _, _, point in sorted(order, key=lambda item: (item[0], item[1]))]


def _bad(point: HistoryPoint, how: str) -> bool:
    return point.failed if how == "fails" else (not point.failed and point.cpu_ops == 0)


_HOW = {"fails": "its lowering fails", "whole": "the probe lowers whole (the runtime gets the op)"}


def history_range(points: list[HistoryPoint], how: str) -> tuple[str, str, str, str]:
    """``(first_bad, fixed_in, last_good, summary)`` over the recorded commits.

    ``first_bad`` is the first commit of the last bad run that follows a good commit, ``last_good`` the
    good commit before it, ``fixed_in`` the first good commit after the last bad one. A run that starts
    at the oldest recorded commit has no ``first_bad`` (it began before the range), one that lasts to
    the newest no ``fixed_in``.
    """
    if how == "whole":  # a commit that recorded only the failure flag says nothing about the CPU ops
        points = [p for p in points if p.failed or p.cpu_ops is not None]
    if not points:
        return "", "", "", "no recorded commit holds the probe yet"
    bad = [_bad(p, how) for p in points]
    where = f"{sum(bad)} of {len(points)} recorded commits"
    if not any(bad):
        return "", "", "", f"never bad on the {len(points)} recorded commits ({_HOW[how]}: never)"
    last = max(i for i, b in enumerate(bad) if b)
    start = last
    while start > 0 and bad[start - 1]:
        start -= 1
    first_bad = points[start].label if start > 0 else ""
    last_good = points[start - 1].label if start > 0 else ""
    fixed_in = points[last + 1].label if last + 1 < len(points) else ""
    return first_bad, fixed_in, last_good, f"{_HOW[how]} on {where}"


# -- building the rows --------------------------------------------------------------------------------

def _blocks(row: dict[str, Any]) -> list[str]:
    """Every recorded block of one policy row, as ``stage: Type: message``."""
    found = []
    if row.get("status") != "lowered" and row.get("stage"):
        found.append(f"{row['stage']}: {row.get('error_type', '')}: {row.get('error', '')}")
    found += [row[key] for key in ("default_blocker", "blocked_with_allowed") if row.get(key)]
    return found


def _matches(bug: Bug, entry: str, block: str) -> bool:
    if bug.stage in RUNTIME_STAGES or not bug.pattern or (bug.only and entry not in bug.only):
        return False
    return bool(re.search(bug.pattern, block))


def _coverage(row: dict[str, Any] | None, entry: str) -> dict[str, Any]:
    if row is None:
        return {"entry": entry, "status": "not recorded"}
    coverage = row.get("coverage") or {}
    if row.get("status") != "lowered" or not coverage:
        return {"entry": entry, "status": f"blocked at {row.get('stage', '?')}: {row.get('error_type', '')}"}
    return {"entry": entry, "status": "lowered", "cpu_percent": coverage.get("cpu_percent"),
            "nodes_cpu": coverage.get("nodes_cpu"), "nodes_total": coverage.get("nodes_total"),
            "vulkan_programs": coverage.get("vulkan_programs"),
            "allowed_on_cpu": list(row.get("allowed_on_cpu") or [])}


def normalize_error(block: str) -> str:
    """A recorded block without what varies between occurrences (symbols, numbers, addresses, paths)."""
    text = re.sub(r"0x[0-9a-f]+", "<address>", block)
    text = re.sub(r"\bu\d+\b", "u…", text)
    text = re.sub(r"/[\w./-]+", "…", text)
    text = re.sub(r"\d+", "N", text).replace("<address>", "0x…")
    return text[:160]


def _stops_at_load(rungs: dict[str, str]) -> bool:
    return bool(rungs) and all(rung == "lowered" for rung in rungs.values())


def _still_stops(stage: str, rungs: dict[str, str]) -> bool:
    """Whether the ladder still stops an entry where a runtime row says (True when it holds no rung)."""
    if not rungs:
        return True
    return _stops_at_load(rungs) if stage == "load" else all(rung == "runs" for rung in rungs.values())


def bug_rows(results: Recorded | Path = RESULTS_ROOT) -> list[BugRow]:
    """Every row, in :data:`BUGS` order, then the unrecorded load failures and unclassified blocks.

    ``results``: what :func:`~vkbench.results.records.read_recorded` read, or the folder to read it from.
    """
    recorded = _recorded(results)
    policy = {row["entry"]: row for row in (recorded.survey.rows if recorded.survey else [])}
    rungs = ladder(recorded)
    runs = recorded.repro_runs
    rows: list[BugRow] = []
    claimed: set[str] = set()
    unmatched = {entry: blocks for entry, row in policy.items() if (blocks := _blocks(row))}
    for bug in BUGS:
        if bug.stage in RUNTIME_STAGES:
            entries = [e for e in bug.recorded if _still_stops(bug.stage, rungs.get(e, {}))]
            claimed.update(entries)
            what_if: list[dict[str, Any]] = []
        else:
            entries = [entry for entry, blocks in policy.items()
                       if any(_matches(bug, entry, block) for block in _blocks(policy[entry]))]
            for entry in entries:
                unmatched[entry] = [b for b in unmatched.get(entry, []) if not _matches(bug, entry, b)]
            lowered_with_op = [e for e in entries if policy[e].get("status") == "lowered"]
            what_if = [_coverage(policy.get(e), e) for e in (*bug.workarounds, *lowered_with_op)]
        rows.append(_row(bug, entries, what_if, rungs, recorded, runs))
    stuck = sorted(e for e, r in rungs.items() if not e.startswith("probe/") and _stops_at_load(r)
                   and e not in claimed)
    if stuck:
        rows.append(_row(UNRECORDED_LOAD, stuck, [], rungs, recorded, runs))
    groups: dict[tuple[str, str], list[str]] = {}
    for entry, blocks in unmatched.items():
        for block in blocks:
            groups.setdefault((block.split(":", 1)[0], normalize_error(block)), []).append(entry)
    for index, ((stage, error), entries) in enumerate(sorted(groups.items()), start=1):
        rows.append(BugRow(f"{stage}_unclassified_{index}", stage, error, NOT_CLASSIFIED, entries, "", "",
                           note="no row of vkbench.results.bugs.BUGS matches this recorded block yet"))
    return rows


def _row(bug: Bug, entries: list[str], what_if: list[dict[str, Any]], rungs: dict[str, dict[str, str]],
         recorded: Recorded, runs: list[ReproRecord]) -> BugRow:
    first_bad = fixed_in = last_good = summary = ""
    if bug.probe and bug.history:
        first_bad, fixed_in, last_good, summary = history_range(probe_history(bug.probe, recorded),
                                                                bug.history)
    name = Path(bug.repro).stem if bug.repro else ""
    seen = {record.machine: {"reproduced": record.runs[name].reproduced, "rc": record.runs[name].rc,
                             "line": record.runs[name].line, "date": record.date,
                             "executorch": (record.build.get("git_version")
                                            or record.build.get("executorch", "")),
                             "torch": record.build.get("torch", "")}
            for record in runs if name in record.runs}
    return BugRow(bug.id, bug.stage, bug.error, bug.owner, entries, bug.probe, bug.repro, first_bad, fixed_in,
                  last_good, summary, bug.build if bug.repro else "", bug.note, what_if,
                  dict(sorted(rungs.get(f"probe/{bug.probe}", {}).items())) if bug.probe else {}, seen)


def owner_counts(rows: list[BugRow]) -> dict[str, int]:
    """Rows per owner, in :data:`OWNERS` order (owners without a row left out)."""
    counts = Counter(row.owner for row in rows)
    return {owner: counts[owner] for owner in OWNERS if counts[owner]}


def repro_path(row: BugRow) -> Path | None:
    """The reproducer's file in this checkout (None when the row has none)."""
    return ROOT / row.repro if row.repro else None


__all__ = ["BUGS", "OWNERS", "UPSTREAM", "Bug", "BugRow", "HistoryPoint", "bug_rows", "history_range",
           "ladder", "latest_policies", "normalize_error", "owner_counts", "probe_history"]
