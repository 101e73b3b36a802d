"""Small helpers to describe a policy's inputs/outputs on its config."""

from __future__ import annotations

from typing import Any


def features(
    state: int | None = None,
    action: int | None = None,
    images: dict[str, tuple[int, int, int]] | None = None,
    env_state: int | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(input_features, output_features)`` dicts of ``PolicyFeature``."""
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.utils.constants import ACTION, OBS_ENV_STATE, OBS_STATE

    inputs: dict[str, Any] = {}
    for key, shape in (images or {}).items():
        inputs[key] = PolicyFeature(type=FeatureType.VISUAL, shape=tuple(shape))
    if state is not None:
        inputs[OBS_STATE] = PolicyFeature(type=FeatureType.STATE, shape=(state,))
    if env_state is not None:
        inputs[OBS_ENV_STATE] = PolicyFeature(type=FeatureType.ENV, shape=(env_state,))
    outputs: dict[str, Any] = {}
    if action is not None:
        outputs[ACTION] = PolicyFeature(type=FeatureType.ACTION, shape=(action,))
    return inputs, outputs


def configure(config: Any, **kwargs: Any) -> Any:
    """Set input/output features on ``config`` (see :func:`features`) and return it."""
    config.input_features, config.output_features = features(**kwargs)
    return config
