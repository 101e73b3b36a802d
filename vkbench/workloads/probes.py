"""The seed's op probes: one small model per known Vulkan coverage rule.

Each probe isolates one rule (dtype, batch size, missing kernel) so a change
in the backend's op registry shows up as a change in a single row. Builders
are seeded so every run exports the same program.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from vkbench.workloads.graphs import Fn


class IndexPut(torch.nn.Module):
    """``y[idx] = 0`` on a copy of the input (lowers to ``aten.index_put``)."""

    def forward(self, t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        y = t.clone()
        y[idx] = 0.0
        return y


class CrossAttention(torch.nn.Module):
    """``nn.MultiheadAttention(32, 4)`` with a query (5 tokens) shorter than key/value (7)."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4)

    def forward(self, query: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        return self.attention(query, memory, memory, need_weights=False)[0]


class ComplexRope(torch.nn.Module):
    """LingBot-VA's and FastWAM's RoPE in miniature: a projection, then a complex product in float64.

    The product's input must come from a parameter (here the ``Linear``): ``to_edge`` then runs
    ``view_as_complex_copy`` on a tensor that requires grad and fails; from a plain input it does not.
    """

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        angles = torch.randn(4, 8)
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pairs = torch.view_as_complex(self.proj(x).to(torch.float64).reshape(1, 4, 8, 2))
        return torch.view_as_real(pairs * self.freqs).flatten(2).to(x.dtype)


class GemmaRMSNorm(torch.nn.Module):
    """Gemma's RMSNorm (PaliGemma in pi0/pi05): ``x * rsqrt(mean(x^2) + eps) * (1 + weight)``.

    The Vulkan pattern that fuses this into ``rms_norm`` takes ``1 + weight``, computed in the graph,
    as its weight; the runtime's prepack wants a constant there.
    """

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return normed * (1.0 + self.weight)


@dataclass(frozen=True)
class Probe:
    """A named probe: what it shows and how to build (module, inputs).

    ``upstream_bug``: set on the minimal repros of ExecuTorch bugs found in
    policies; the commit that fixes one shows up as a step in the suite.
    """

    name: str
    shows: str
    build: Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]
    upstream_bug: str = ""
    #: ``twice``: lower one exported program a second time and record that lowering (what a tool
    #: that retries does); the failure it isolates needs a second ``to_edge``.
    lowerings: int = 1


def _seeded(build: Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]):
    def seeded() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
        torch.manual_seed(0)
        return build()

    return seeded


def _signal() -> torch.Tensor:
    return torch.randn(1, 16, 32)


PROBES: dict[str, Probe] = {
    probe.name: probe
    for probe in (
        Probe("linear_f32", "Linear(64,64) float32 on (4,64)",
              lambda: (torch.nn.Linear(64, 64), (torch.randn(4, 64),))),
        Probe("linear_bf16", "Linear(64,64) bfloat16: dtype rule",
              lambda: (torch.nn.Linear(64, 64).to(torch.bfloat16),
                       (torch.randn(4, 64, dtype=torch.bfloat16),))),
        Probe("conv2d_batch1", "Conv2d(3,8,3) on (1,3,32,32)",
              lambda: (torch.nn.Conv2d(3, 8, 3), (torch.randn(1, 3, 32, 32),))),
        Probe("conv2d_batch2", "Conv2d(3,8,3) on (2,3,32,32): batch-size rule",
              lambda: (torch.nn.Conv2d(3, 8, 3), (torch.randn(2, 3, 32, 32),))),
        Probe("elu", "ELU: no kernel", lambda: (torch.nn.ELU(), (_signal(),))),
        Probe("mish", "Mish: softplus decomposes to log1p", lambda: (torch.nn.Mish(), (_signal(),))),
        Probe("var", "var(dim=-1, keepdim=True)",
              lambda: (Fn(lambda t: t.var(dim=-1, keepdim=True)), (_signal(),))),
        Probe("conv_transpose1d", "ConvTranspose1d(16,8,4,stride=2,padding=1)",
              lambda: (torch.nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1), (_signal(),))),
        Probe("index_put", "y[idx] = 0 on (8,32), idx=[1,3]",
              lambda: (IndexPut(), (torch.randn(8, 32), torch.tensor([1, 3])))),
        Probe("split_one_piece", "split(relu(x), 1)[0] of a (1,8) tensor: a one-piece split_with_sizes_copy",
              lambda: (Fn(lambda t: torch.split(torch.relu(t), 1)[0].unsqueeze(0)), (torch.randn(1, 8),)),
              upstream_bug="the partitioner crashes (AttributeError: 'list' object has no attribute "
                           "'shape' in utils.filter_invalid_reprs): blocks the SAC actor "
                           "(gaussian_actor/deterministic)"),
        Probe("mha_cross", "MultiheadAttention(32,4), query 5 tokens, key/value 7",
              lambda: (CrossAttention().eval(), (torch.randn(5, 1, 32), torch.randn(7, 1, 32))),
              upstream_bug="lowers to 3 Vulkan programs that the Vulkan runtime cannot load "
                           "(Value.h:262 isTensorRef): blocks act/model on the GPU"),
        Probe("index_dim1", "t[:, idx] of a (4,6) tensor, idx 1-D: index.Tensor with indices [None, idx]",
              lambda: (Fn(lambda t, idx: t[:, idx] * 2.0), (torch.randn(4, 6), torch.tensor([0, 2, 3]))),
              upstream_bug="the partitioner delegates an index.Tensor whose one index is not on dim 0; "
                           "the runtime refuses it at load (IndexTensor.cpp:76: only one index tensor "
                           "is supported): blocks vqbet/rollout on the GPU"),
        Probe("layer_norm_no_affine", "LayerNorm(32, elementwise_affine=False) on (1,16,32)",
              lambda: (torch.nn.LayerNorm(32, elementwise_affine=False), (_signal(),)),
              upstream_bug="delegated whole; the runtime refuses it at load (NativeLayerNorm.cpp:95: "
                           "native_layer_norm requires weight to be non-None): blocks "
                           "multi_task_dit/denoise_step and lingbot_va on the GPU"),
        Probe("logical_not", "where(logical_not(x > 0), x, 2x) on (1,16,32)",
              lambda: (Fn(lambda t: torch.where(torch.logical_not(t > 0), t, t * 2.0)), (_signal(),)),
              upstream_bug="the partitioner delegates aten.logical_not, which the runtime lacks: loading "
                           "aborts the process (VulkanBackend.cpp:480 Missing operator): blocks xvla "
                           "on the GPU"),
        Probe("complex_rope", "Linear(16,16) -> float64 -> view_as_complex x a complex64 table -> "
              "view_as_real (LingBot-VA/FastWAM RoPE)",
              lambda: (ComplexRope().eval(), (torch.randn(1, 4, 16),)),
              upstream_bug="to_edge_transform_and_lower fails (RuntimeError: view_as_complex_copy does not "
                           "support automatic differentiation for outputs with complex dtype): blocks "
                           "fastwam/action_step and lingbot_va/{action,video}_step"),
        Probe("inputless_partition", "log1p(arange(8) * 2) + x: a Vulkan partition (arange, mul) with no "
              "tensor inputs; log1p, on the CPU, only cuts the graph",
              lambda: (Fn(lambda t: torch.log1p(torch.arange(8, dtype=torch.float32) * 2.0) + t),
                       (torch.randn(8),)),
              upstream_bug="Vulkan preprocess fails (FuseBatchNormPass: two fake modes, the export's and "
                           "a new one for the input-free partition): blocks "
                           "fastwam/text_encoder_masked_zeroing"),
        Probe("empty_like_transposed", "empty_like(x.T).fill_(1) + x.T on (4,6)",
              lambda: (Fn(lambda t: torch.empty_like(t.transpose(0, 1)).fill_(1.0) + t.transpose(0, 1)),
                       (torch.randn(4, 6),)),
              upstream_bug="to_edge decomposes empty_like of a non-contiguous tensor into "
                           "aten.empty_permuted, refuses it (not Core ATen) and has no kernel for it: "
                           "blocks smolvla/denoise_step"),
        Probe("bucketize", "bucketize(x, [-1, 0, 1]) on (1,16,32)",
              lambda: (Fn(lambda t: torch.bucketize(t, torch.tensor([-1.0, 0.0, 1.0]))), (_signal(),)),
              upstream_bug="to_edge refuses aten.bucketize.Tensor (not Core ATen; no ExecuTorch kernel): "
                           "blocks smolvla/prefix (and aten.multinomial vqbet/rollout the same way)"),
        Probe("conv2d_padding_valid", "Conv2d(3,8,14,stride=14,padding='valid') on (1,3,56,56): SigLIP's "
              "patch embedding (aten.conv2d.padding)",
              lambda: (torch.nn.Conv2d(3, 8, 14, stride=14, padding="valid"), (torch.randn(1, 3, 56, 56),)),
              upstream_bug="delegated whole; the runtime refuses it at load (VecUtils.h:367 make_ivec2: "
                           "ints.size() == 2, from conv -> create_kernel2d_params): blocks "
                           "pi0/pi05/pi0_fast prefix on the GPU"),
        Probe("rms_norm_one_plus_weight", "Gemma's RMSNorm x*rsqrt(mean(x^2)+eps)*(1+w) on (1,16,32)",
              lambda: (GemmaRMSNorm(32).eval(), (_signal(),)),
              upstream_bug="fused into rms_norm with the computed 1+w as weight; the runtime's prepack "
                           "refuses it at load (Staging.cpp:229 prepack_standard: val_is_tref, from "
                           "add_rms_norm_node): blocks pi0/pi05 denoise_step on the GPU"),
        Probe("int32_to_bool", "x * m.bool() with m an int32 (4,8) tensor",
              lambda: (Fn(lambda t, m: t * m.to(torch.bool).to(t.dtype)),
                       (torch.randn(4, 8), torch.randint(0, 2, (4, 8), dtype=torch.int32))),
              upstream_bug="the int32 -> bool copy is delegated; the runtime has no shader for it at load "
                           "(ShaderRegistry.cpp:51 no view_convert_buffer_int32_uint8, from "
                           "to_dim_order_copy): blocks multi_task_dit/encoder, eo1, evo1, wall_x on the GPU"),
        Probe("div_0d", "x * (t / 64) with t a 0-d tensor (GR00T's timestep embedding: "
              "log(10000) / half_dim)",
              lambda: (Fn(lambda t, scale: t * (scale / 64)), (torch.randn(4, 8), torch.tensor(9.21))),
              upstream_bug="a binary op on a 0-d tensor is delegated; the runtime indexes its empty size "
                           "list at load (vector::_M_range_check, from div -> "
                           "calculate_broadcasted_output_size): blocks groot and vla_jepa on the GPU"),
        Probe("group_norm_3d", "GroupNorm(2,8) on (1,8,16): an (N, C, L) input",
              lambda: (torch.nn.GroupNorm(2, 8), (torch.randn(1, 8, 16),)),
              upstream_bug="delegated whole; it loads and runs but every output is NaN (4-D inputs are "
                           "right): diffusion/unet_step's wrong output (Conv1d -> GroupNorm -> Mish "
                           "blocks)"),
        Probe("relower_unbacked", "nonzero(x > 0).sum() + x on (8,), its exported program lowered twice",
              lambda: (Fn(lambda t: torch.nonzero(t > 0).sum() + t), (torch.randn(8),)), lowerings=2,
              upstream_bug="the second to_edge_transform_and_lower of one ExportedProgram fails "
                           "(PendingUnbackedSymbolNotFound): what vkbench's non-Core-ATen retry met on "
                           "smolvla/prefix before it re-exported"),
        Probe("clone_5d", "x.clone(), y * 2 on two 5-D (1,4,1,8,8) inputs: the dropped clone leaves x a "
              "delegate input that no op uses",
              lambda: (Fn(lambda x, y: (x.clone(), y * 2.0)),
                       (torch.randn(1, 4, 1, 8, 8), torch.randn(1, 4, 1, 8, 8))),
              upstream_bug="delegated whole; the runtime crashes at load (SIGSEGV in "
                           "vTensor::texture_meta_ubo: set_input_tensor stages the unused 5-D input as a "
                           "texture with no uniform data): blocks fastwam/vae_encoder on the GPU"),
    )
}


def build_probe(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """(module, example inputs) for a probe; KeyError names the known probes."""
    if name not in PROBES:
        raise KeyError(f"unknown probe {name!r}; known: {', '.join(PROBES)}")
    return _seeded(PROBES[name].build)()


def probe_coverage(name: str, *, to_executorch: bool = False) -> dict[str, Any]:
    """Coverage of one probe as JSON, or ``{"failed_stage", "error"}`` when lowering fails.

    Both carry ``work_seconds``: the wall time of building and lowering the probe.

    The one loop body behind ``vkbench probe``, the probe benchmarks and the
    coverage page. Any exception counts as a failed lowering (an old commit
    may raise something other than :class:`~vkbench.core.lowering.LoweringError`).
    """
    from vkbench.core.lowering import export_program, lower

    start = time.perf_counter()
    module, inputs = build_probe(name)
    try:
        exported = export_program(module, inputs) if PROBES[name].lowerings > 1 else None
        for _ in range(PROBES[name].lowerings - 1):  # the earlier lowerings' outcome is not the probe's
            with contextlib.suppress(Exception):
                lower(None, (), exported=exported, to_executorch=False)
        coverage, _ = lower(module, inputs, exported=exported, to_executorch=to_executorch)
    except Exception as error:  # noqa: BLE001 - recorded, never raised
        stage = getattr(error, "stage", None)  # LoweringError names its stage and cause
        message = str(error) if stage else f"{type(error).__name__}: {error}"
        return {"failed_stage": stage or "lower", "error": message,
                "work_seconds": round(time.perf_counter() - start, 3)}
    return {**coverage.to_json(), "work_seconds": round(time.perf_counter() - start, 3)}
