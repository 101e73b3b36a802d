"""Multi-task DiT: CLIP observation encoder (reduced) and one DiT noise-prediction step (full size).

The policy loads CLIP with ``CLIPVisionModel/CLIPTextModel.from_pretrained(name)``;
``name`` may be a directory, so vkbench saves a reduced, randomly initialised
``CLIPModel`` into a local folder and passes its path (no hub call, no
monkeypatch). The DiT keeps its default size (512 wide, 6 layers, 8 heads).
The CLIP tokenizer stays outside: token ids are inputs.
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_REDUCED = ("CLIP ViT-B/16 -> 2 layers x 128, 2 heads (full 12 x 768, 12 heads) for vision and text; "
            "224x224, patch 16, vocab 49408, 77 tokens kept; DiT full size")
_CAMS = ["observation.images.top", "observation.images.wrist"]
_STATE, _ACTION = 8, 7


@cache
def clip_dir() -> str:
    """A local folder holding a reduced random-weight CLIP (written once per process)."""
    from transformers import CLIPConfig, CLIPModel

    folder = Path(tempfile.mkdtemp(prefix="vkbench-clip-"))
    small = {"hidden_size": 128, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 2}
    config = CLIPConfig(text_config=dict(small), vision_config={**small, "image_size": 224, "patch_size": 16},
                        projection_dim=128)
    torch.manual_seed(0)
    CLIPModel(config).save_pretrained(folder)
    return str(folder)


def _policy():
    from lerobot.policies.multi_task_dit.configuration_multi_task_dit import MultiTaskDiTConfig
    from lerobot.policies.multi_task_dit.modeling_multi_task_dit import MultiTaskDiTPolicy

    config = MultiTaskDiTConfig(device="cpu", vision_encoder_name=clip_dir(), text_encoder_name=clip_dir())
    configure(config, state=_STATE, action=_ACTION, images={key: (3, 224, 224) for key in _CAMS})
    return MultiTaskDiTPolicy(config).eval(), config


class _Encoder(nn.Module):
    """``observation_encoder.encode``: CLIP per camera and step, CLIP text, state -> conditioning vector."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.encoder = policy.observation_encoder

    def forward(self, state: Tensor, images: Tensor, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        from lerobot.utils import constants as c

        batch = {c.OBS_STATE: state, c.OBS_IMAGES: images, c.OBS_LANGUAGE_TOKENS: input_ids,
                 c.OBS_LANGUAGE_ATTENTION_MASK: attention_mask}
        return self.encoder.encode(batch)


class _Step(nn.Module):
    """One ``conditional_sample`` iteration's network call: ``noise_predictor(x, t, conditioning)``."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.noise_predictor = policy.noise_predictor

    def forward(self, sample: Tensor, timestep: Tensor, conditioning_vec: Tensor) -> Tensor:
        return self.noise_predictor(sample, timestep, conditioning_vec=conditioning_vec)


def _encoder_inputs(config) -> tuple[Tensor, ...]:
    s = config.n_obs_steps
    return (torch.randn(1, s, _STATE), torch.rand(1, s, len(_CAMS), 3, 224, 224),
            torch.randint(0, 1000, (1, config.tokenizer_max_length)),
            torch.ones(1, config.tokenizer_max_length, dtype=torch.long))


@register(
    "multi_task_dit/encoder",
    "Multi-task DiT observation encoder: CLIP vision (per camera, per step) + CLIP text + state",
    slow=True, reduced=_REDUCED, notes="two 224x224 cameras, 2 obs steps, 77 token ids; local CLIP folder",
)
def multi_task_dit_encoder():
    policy, config = _policy()
    return _Encoder(policy), _encoder_inputs(config)


@register(
    "multi_task_dit/denoise_step",
    "Multi-task DiT one denoising step: AdaLN DiT with RoPE attention over the noisy action horizon",
    slow=True, reduced=_REDUCED, notes="diffusion objective (DDPM timestep, int64); scheduler outside",
)
def multi_task_dit_denoise_step():
    policy, config = _policy()
    with torch.no_grad():
        cond = _Encoder(policy)(*_encoder_inputs(config))
    sample = torch.randn(1, config.horizon, _ACTION)
    return _Step(policy), (sample, torch.full((1,), 50, dtype=torch.long), cond)
