"""Build a policy from its default config offline, for the policies that still need the hub.

fastwam and molmoact2 keep a row blocked at stage ``build`` with the exception
until each has its own reduced, offline-built entries: this suite runs with
``HF_HUB_OFFLINE=1``, and their ``__init__`` loads a hub asset.
"""

from __future__ import annotations

from typing import Any

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

IMG = "observation.images.top"


def build_default(policy_type: str, images: dict[str, tuple[int, int, int]], state: int, action: int,
                  **config_kwargs: Any):
    """Construct ``policy_type`` from its config offline; raises where it needs the hub."""
    from lerobot.policies.factory import get_policy_class, make_policy_config

    config = make_policy_config(policy_type, device="cpu", **config_kwargs)
    configure(config, state=state, action=action, images=images)
    return get_policy_class(policy_type)(config)


def _no_wrapper(policy: Any, policy_type: str):
    raise NotImplementedError(
        f"{type(policy).__name__} built offline, but vkbench has no export wrapper for {policy_type} yet"
    )


def hub_entry(policy_type: str, part: str, description: str, *, images=None, state: int = 8,
              action: int = 7, notes: str = "", reduced: str = "", **config_kwargs: Any) -> None:
    """Register ``policy_type/part`` as the default policy built offline (blocked where it needs the hub)."""
    images = images or {IMG: (3, 224, 224)}

    def build():
        kwargs = {k: (v() if callable(v) else v) for k, v in config_kwargs.items()}
        policy = build_default(policy_type, images, state, action, **kwargs)
        return _no_wrapper(policy, policy_type)

    register(f"{policy_type}/{part}", description, notes=notes, slow=True, reduced=reduced)(build)
