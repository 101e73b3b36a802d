"""FastWAM (Wan2.2 video DiT world-action model): still blocked at build.

``FastWAMPolicy.__init__`` loads the Wan2.2 VAE from a hard-coded hub id, so the
default policy cannot be built offline.
"""

from __future__ import annotations

from typing import Any

from vkbench.policies.offline_build import hub_entry


def _small_fastwam(kind: str) -> dict[str, Any]:
    from lerobot.policies.fastwam import configuration_fastwam as cfg

    full = (cfg.default_video_dit_config if kind == "video" else cfg.default_action_dit_config)(7)
    full.update(hidden_dim=128, ffn_dim=256, num_heads=2, attn_head_dim=64, num_layers=1)
    return full


hub_entry("fastwam", "model", "FastWAM: Wan2.2 video DiT world-action model",
          images={"observation.images.top": (3, 224, 224), "observation.images.wrist": (3, 224, 224)},
          video_dit_config=lambda: _small_fastwam("video"),
          action_dit_config=lambda: _small_fastwam("action"),
          reduced="video and action DiTs: 1 layer, 2 heads x 64, hidden 128, ffn 256 (full: 30 layers, "
          "hidden 3072/1024; random init of the full model exceeds 24 GiB)",
          notes="two 224x224 cameras (image widths must sum to 448); __init__ loads the Wan2.2 VAE from a "
          "hard-coded hub id (WAN22_DIFFUSERS_MODEL_ID), not configurable without a monkeypatch")
