"""LingBot-VA, reduced: one denoising step of the dual-stream Wan transformer (action and video).

The transformer is the only network in LeRobot's checkpoint; the Wan2.2 VAE
and the UMT5 text encoder are frozen modules loaded lazily from the hub at
inference (``wan_pretrained_path``), so the exported steps take the VAE
latents and the UMT5 text embeddings as inputs. The streaming K/V pool
(slot allocation with ``nonzero``/``argsort`` over a Python dict) stays
outside: the steps are exported without a cache (attention over the current
chunk only, as on the first chunk of an episode with no cache created).

Both steps stop at ``to_edge``: the rotary position embedding is complex-valued
(``torch.polar`` in ``WanRotaryPosEmbed``, ``view_as_complex`` in the attention),
and edge lowering rejects complex outputs. The ``*_real_rope`` entries apply the
same rotation with real cos/sin arithmetic (see ``_StepRealRope``).
"""

from __future__ import annotations

from types import MethodType

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_REDUCED = ("Wan transformer 2 layers, 2 heads x 128, ffn 256 (full: 30 layers, 24 heads x 128, "
            "ffn 14336: >24 GiB at random init); UMT5 text width 4096 kept, 64 text tokens (full 512); "
            "float32 (released: bfloat16)")
_TEXT = 64
_CAMS = ["observation.images.image", "observation.images.image2"]


def _policy():
    from lerobot.policies.lingbot_va.configuration_lingbot_va import LingBotVAConfig
    from lerobot.policies.lingbot_va.modeling_lingbot_va import LingBotVAPolicy

    config = LingBotVAConfig(device="cpu", dtype="float32", num_layers=2, num_attention_heads=2,
                             attention_head_dim=128, ffn_dim=256)
    configure(config, state=8, action=7, images={key: (3, config.height, config.width) for key in _CAMS})
    return LingBotVAPolicy(config)


class _Step(nn.Module):
    """``transformer(input_dict, action_mode=...)`` as ``_infer`` calls it once per denoising step."""

    def __init__(self, transformer: nn.Module, action_mode: bool) -> None:
        super().__init__()
        self.transformer = transformer
        self.action_mode = action_mode

    def forward(self, noisy: Tensor, timesteps: Tensor, grid_id: Tensor, text_emb: Tensor) -> Tensor:
        inputs = {"noisy_latents": noisy, "timesteps": timesteps, "grid_id": grid_id, "text_emb": text_emb}
        return self.transformer(inputs, update_cache=0, cache_name="none", action_mode=self.action_mode)


def _real_rope(self: nn.Module, grid_ids: Tensor) -> Tensor:
    """``WanRotaryPosEmbed.forward`` returning the float32 angles' ``(cos, sin)`` stacked on a last axis of 2
    instead of ``torch.polar(ones, angles)`` (complex64 with exactly those real and imaginary parts)."""
    with torch.no_grad():
        f_freqs = grid_ids[:, 0, :].unsqueeze(-1) * self.f_freqs_base.to(grid_ids.device)
        h_freqs = grid_ids[:, 1, :].unsqueeze(-1) * self.h_freqs_base.to(grid_ids.device)
        w_freqs = grid_ids[:, 2, :].unsqueeze(-1) * self.w_freqs_base.to(grid_ids.device)
        freqs = torch.cat([f_freqs, h_freqs, w_freqs], dim=-1).float()
        return torch.stack([freqs.cos(), freqs.sin()], dim=-1)


def _apply_real_rotary_emb(x: Tensor, freqs: Tensor) -> Tensor:
    """lerobot's ``apply_rotary_emb`` without complex tensors: channels (2i, 2i+1) of each head are the real
    and imaginary parts of one complex number (``view_as_complex`` of a trailing axis of 2), multiplied in
    float64 by ``cos + i sin`` and written back interleaved (``view_as_real(...).flatten(3)``)."""
    pairs = x.to(torch.float64).reshape(x.shape[0], x.shape[1], x.shape[2], -1, 2)
    re, im = pairs[..., 0], pairs[..., 1]
    cos, sin = freqs[..., 0], freqs[..., 1]
    return torch.stack([re * cos - im * sin, re * sin + im * cos], dim=-1).flatten(3).to(x.dtype)


def _attention_real_rope(self: nn.Module, q: Tensor, k: Tensor, v: Tensor, rotary_emb: Tensor | None,
                         update_cache: int = 0, cache_name: str = "pos") -> Tensor:
    """``WanAttention.forward`` with its nested complex ``apply_rotary_emb`` replaced by
    :func:`_apply_real_rotary_emb`; every other line is lerobot's."""
    kv_cache = (
        self.attn_caches[cache_name]
        if (self.attn_caches is not None) and (cache_name in self.attn_caches)
        else None
    )

    query, key, value = self.to_q(q), self.to_k(k), self.to_v(v)
    query = self.norm_q(query)
    query = query.unflatten(2, (self.heads, -1))
    key = self.norm_k(key)
    key = key.unflatten(2, (self.heads, -1))
    value = value.unflatten(2, (self.heads, -1))
    if rotary_emb is not None:
        query = _apply_real_rotary_emb(query, rotary_emb)
        key = _apply_real_rotary_emb(key, rotary_emb)
    slots = None
    if kv_cache is not None and kv_cache["k"] is not None:
        slots = self.update_cache(cache_name, key, value, is_pred=(update_cache == 1))
        key_pool = self.attn_caches[cache_name]["k"]
        value_pool = self.attn_caches[cache_name]["v"]
        mask = self.attn_caches[cache_name]["mask"]
        valid = mask.nonzero(as_tuple=False).squeeze(-1)
        key = key_pool[:, valid]
        value = value_pool[:, valid]

    hidden_states = self.attn_op(query, key, value)

    if update_cache == 0 and kv_cache is not None and kv_cache["k"] is not None:
        self.restore_cache(cache_name, slots)

    hidden_states = hidden_states.flatten(2, 3)
    hidden_states = hidden_states.type_as(query)
    hidden_states = self.to_out[0](hidden_states)
    hidden_states = self.to_out[1](hidden_states)
    return hidden_states


class _StepRealRope(_Step):
    """:class:`_Step` with the rotary embedding applied in real arithmetic (see the entries' notes).

    The replacements are bound on this transformer's own ``rope`` and ``WanAttention`` instances, so a
    transformer built for the unchanged entries keeps lerobot's complex code.
    """

    def __init__(self, transformer: nn.Module, action_mode: bool) -> None:
        super().__init__(transformer, action_mode)
        from lerobot.policies.lingbot_va.utils import WanAttention, WanRotaryPosEmbed

        for module in transformer.modules():
            if isinstance(module, WanRotaryPosEmbed):
                module.forward = MethodType(_real_rope, module)
            elif isinstance(module, WanAttention):
                module.forward = MethodType(_attention_real_rope, module)


def _build(action_mode: bool, kind: type[_Step] = _Step):
    from lerobot.policies.lingbot_va.utils import get_mesh_id

    policy = _policy()
    cfg = policy.config
    frames = cfg.frame_chunk_size
    if action_mode:
        noisy = torch.randn(1, cfg.action_dim, frames, cfg.action_per_frame, 1)
        grid = get_mesh_id(frames, cfg.action_per_frame, 1, 1, 1, 0, action=True)
    else:
        h, w = policy._latent_hw  # noqa: SLF001 - the latent grid of the configured cameras
        noisy = torch.randn(1, cfg.in_channels, frames, h, w)
        p = cfg.patch_size
        grid = get_mesh_id(frames // p[0], h // p[1], w // p[2], 0, 1, 0)
    timesteps = torch.full((1, frames), 500.0)
    text_emb = torch.randn(1, _TEXT, cfg.text_dim)
    return kind(policy.transformer, action_mode), (noisy, timesteps, grid[None], text_emb)


@register(
    "lingbot_va/action_step",
    "LingBot-VA one action denoising step: Wan transformer in action mode over the noisy action chunk",
    slow=True, reduced=_REDUCED,
    notes="no K/V pool (its slot allocation is data-dependent Python); UMT5 text embeddings as input",
)
def lingbot_va_action_step():
    return _build(action_mode=True)


@register(
    "lingbot_va/video_step",
    "LingBot-VA one video-latent denoising step: Wan transformer over patchified VAE latents",
    slow=True, reduced=_REDUCED,
    notes="two 128x128 cameras (latents 8x16, patch 1x2x2); VAE latents and UMT5 embeddings as inputs",
)
def lingbot_va_video_step():
    return _build(action_mode=False)


_REAL_ROPE = (
    "rewrite: (1) WanRotaryPosEmbed returns the float32 angles' (cos, sin) on a trailing axis of 2 instead "
    "of torch.polar's complex64, (2) the self-attention rotates each head's channel pairs (2i, 2i+1) as "
    "(re, im) with real float64 products (re*cos - im*sin, re*sin + im*cos) instead of view_as_complex, "
    "a complex multiply and view_as_real; nothing else differs from "
)


@register(
    "lingbot_va/action_step_real_rope",
    "LingBot-VA action denoising step, rewritten to export: lingbot_va/action_step, real-valued RoPE",
    slow=True, reduced=_REDUCED,
    notes=_REAL_ROPE + "lingbot_va/action_step",
)
def lingbot_va_action_step_real_rope():
    return _build(action_mode=True, kind=_StepRealRope)


@register(
    "lingbot_va/video_step_real_rope",
    "LingBot-VA video-latent denoising step, rewritten to export: lingbot_va/video_step, real-valued RoPE",
    slow=True, reduced=_REDUCED,
    notes=_REAL_ROPE + "lingbot_va/video_step",
)
def lingbot_va_video_step_real_rope():
    return _build(action_mode=False, kind=_StepRealRope)
