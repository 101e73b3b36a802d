"""Rows of the policies that still cannot be built offline: fastwam, molmoact2.

The other VLAs have their own modules (pi, smolvla, xvla, groot, eo1, evo1,
vla_jepa, multi_task_dit, lingbot, wall_x), built from reduced configs written
locally. These two keep a row blocked at stage ``build`` with the exception, since this
suite runs with ``HF_HUB_OFFLINE=1`` (or lacks the optional dependencies).
"""

from __future__ import annotations

from typing import Any

from vkbench.policies._features import configure
from vkbench.policies.registry import register

_IMG = "observation.images.top"


def _build_default(policy_type: str, images: dict[str, tuple[int, int, int]], state: int, action: int,
                   **config_kwargs: Any):
    """Construct ``policy_type`` from its config offline; raises where it needs the hub."""
    from lerobot.policies.factory import get_policy_class, make_policy_config

    config = make_policy_config(policy_type, device="cpu", **config_kwargs)
    configure(config, state=state, action=action, images=images)
    return get_policy_class(policy_type)(config)


def _small_fastwam(kind: str) -> dict[str, Any]:
    from lerobot.policies.fastwam import configuration_fastwam as cfg

    full = (cfg.default_video_dit_config if kind == "video" else cfg.default_action_dit_config)(7)
    full.update(hidden_dim=128, ffn_dim=256, num_heads=2, attn_head_dim=64, num_layers=1)
    return full


def _no_wrapper(policy: Any, policy_type: str):
    raise NotImplementedError(
        f"{type(policy).__name__} built offline, but vkbench has no export wrapper for {policy_type} yet"
    )


def _hub_entry(policy_type: str, part: str, description: str, *, images=None, state: int = 8,
               action: int = 7, notes: str = "", reduced: str = "", **config_kwargs: Any) -> None:
    images = images or {_IMG: (3, 224, 224)}

    def build():
        kwargs = {k: (v() if callable(v) else v) for k, v in config_kwargs.items()}
        policy = _build_default(policy_type, images, state, action, **kwargs)
        return _no_wrapper(policy, policy_type)

    register(f"{policy_type}/{part}", description, notes=notes, slow=True, reduced=reduced)(build)


_hub_entry("fastwam", "model", "FastWAM: Wan2.2 video DiT world-action model",
           images={"observation.images.top": (3, 224, 224), "observation.images.wrist": (3, 224, 224)},
           video_dit_config=lambda: _small_fastwam("video"),
           action_dit_config=lambda: _small_fastwam("action"),
           reduced="video and action DiTs: 1 layer, 2 heads x 64, hidden 128, ffn 256 (full: 30 layers, "
           "hidden 3072/1024; random init of the full model exceeds 24 GiB)",
           notes="two 224x224 cameras (image widths must sum to 448); __init__ loads the Wan2.2 VAE from a "
           "hard-coded hub id (WAN22_DIFFUSERS_MODEL_ID), not configurable without a monkeypatch")
_hub_entry("molmoact2", "model", "MolmoAct2: Molmo VLM + action expert",
           notes="__init__ loads checkpoint_path (a hub id by default; a local folder would do, but "
           "vkbench does not write a reduced MolmoAct2 checkpoint yet)")
