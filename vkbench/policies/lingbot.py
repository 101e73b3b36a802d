"""LingBot-VA, reduced: one denoising step of the dual-stream Wan transformer (action and video).

The transformer is the only network in LeRobot's checkpoint; the Wan2.2 VAE
and the UMT5 text encoder are frozen modules loaded lazily from the hub at
inference (``wan_pretrained_path``), so the exported steps take the VAE
latents and the UMT5 text embeddings as inputs. The streaming K/V pool
(slot allocation with ``nonzero``/``argsort`` over a Python dict) stays
outside: the steps are exported without a cache (attention over the current
chunk only, as on the first chunk of an episode with no cache created).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from vkbench.policies._features import configure
from vkbench.policies.registry import register

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


def _build(action_mode: bool):
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
    return _Step(policy.transformer, action_mode), (noisy, timesteps, grid[None], text_emb)


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
