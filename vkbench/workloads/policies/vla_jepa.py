"""VLA-JEPA, reduced: Qwen3-VL backbone (embodied-action token states) and one DiT flow-matching step.

``Qwen3VLInterface`` loads ``Qwen3VLForConditionalGeneration`` and its processor
with ``from_pretrained(qwen_model_name)``; vkbench saves a reduced random-weight
Qwen3-VL and a processor (a word-level tokenizer holding Qwen's vision special
tokens) into a local folder and passes its path (no hub call, no monkeypatch).
The V-JEPA2 world model is a training-time loss (``predict_action`` does not use
it), so ``enable_world_model=False``. Chat template and tokenizer stay outside.
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_REDUCED = (
    "Qwen3-VL: text 2 layers x 256, 4 heads x 64, 2 KV heads (2B: 28 x 2048); vision 2 blocks x 128 with "
    "deepstack at both (full 24 x 1024); action DiT default preset; vocab 151936 kept; world model off"
)
_SPECIAL = [
    "<unk>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<|im_start|>",
    "<|im_end|>",
]
_GRID = (1, 14, 14)  # one 224x224 image, patch 16 -> 196 patches -> 49 tokens
_TEXT = 16


@cache
def qwen3vl_dir() -> str:
    """A local folder with a reduced random-weight Qwen3-VL and its processor (written once per process)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLImageProcessor,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    folder = Path(tempfile.mkdtemp(prefix="vkbench-qwen3vl-"))
    word_level = Tokenizer(models.WordLevel({t: i for i, t in enumerate(_SPECIAL)}, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=word_level,
        unk_token="<unk>",
        pad_token="<unk>",
        extra_special_tokens={
            "image_token": "<|image_pad|>",
            "video_token": "<|video_pad|>",
            "vision_start_token": "<|vision_start|>",
            "vision_end_token": "<|vision_end|>",
        },
    )
    config = Qwen3VLConfig(
        text_config={
            "hidden_size": 256,
            "intermediate_size": 512,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 151936,
            "rope_scaling": {
                "rope_type": "default",
                "mrope_section": [12, 10, 10],
                "mrope_interleaved": True,
            },
        },
        vision_config={
            "depth": 2,
            "hidden_size": 128,
            "intermediate_size": 256,
            "num_heads": 2,
            "out_hidden_size": 256,
            "deepstack_visual_indexes": [0, 1],
            "patch_size": 16,
        },
        image_token_id=_SPECIAL.index("<|image_pad|>"),
        video_token_id=_SPECIAL.index("<|video_pad|>"),
        vision_start_token_id=_SPECIAL.index("<|vision_start|>"),
        vision_end_token_id=_SPECIAL.index("<|vision_end|>"),
    )
    torch.manual_seed(0)
    Qwen3VLForConditionalGeneration(config).save_pretrained(folder)
    Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(patch_size=16, merge_size=2),
        tokenizer=tokenizer,
        video_processor=Qwen3VLVideoProcessor(patch_size=16),
        chat_template="",
    ).save_pretrained(folder)
    return str(folder)


def _model():
    from lerobot.policies.vla_jepa.configuration_vla_jepa import VLAJEPAConfig
    from lerobot.policies.vla_jepa.modeling_vla_jepa import VLAJEPAPolicy

    config = VLAJEPAConfig(
        device="cpu", qwen_model_name=qwen3vl_dir(), enable_world_model=False, torch_dtype="float32"
    )
    configure(config, state=8, action=7, images={"observation.images.top": (3, 224, 224)})
    policy = VLAJEPAPolicy(config)
    return policy.model.float().eval(), config


def _backbone_inputs(model) -> tuple[tuple[Tensor, ...], list[int]]:
    cfg = model.qwen.model.config
    t, h, w = _GRID
    image = [cfg.vision_start_token_id, *[cfg.image_token_id] * (t * h * w // 4), cfg.vision_end_token_id]
    n = model.config.num_embodied_action_tokens_per_instruction
    ids = [*range(10, 10 + _TEXT), *image, *[model.embodied_action_token_id] * n]
    positions = [i for i, tok in enumerate(ids) if tok == model.embodied_action_token_id]
    ids_t = torch.tensor(ids)[None]
    patch = 3 * cfg.vision_config.temporal_patch_size * cfg.vision_config.patch_size**2
    mm = (ids_t == cfg.image_token_id).to(torch.int32)
    inputs = (ids_t, torch.ones_like(ids_t), torch.randn(t * h * w, patch), torch.tensor([_GRID]), mm)
    return inputs, positions


class _Backbone(nn.Module):
    """``_encode_qwen`` after the processor: Qwen3-VL, pre-norm last-layer states at the embodied tokens."""

    def __init__(self, model: nn.Module, positions: list[int]) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("positions", torch.tensor(positions), persistent=False)

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor,
        pixel_values: Tensor,
        image_grid_thw: Tensor,
        mm_token_type_ids: Tensor,
    ):
        last = self.model._qwen_last_decoder_hidden(
            {  # noqa: SLF001
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "pixel_values": pixel_values,
                "image_grid_thw": image_grid_thw,
                "mm_token_type_ids": mm_token_type_ids,
            }
        )
        return last.index_select(1, self.positions)


class _Step(nn.Module):
    """One iteration of ``VLAJEPAActionHead.predict_action``: DiT over state/action tokens, Euler update."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.head = model.action_model

    def forward(self, conditioning: Tensor, actions: Tensor, state: Tensor, timesteps: Tensor) -> Tensor:
        head = self.head
        hidden = head._build_inputs(conditioning, actions, state, timesteps)  # noqa: SLF001
        pred = head.model(hidden_states=hidden, encoder_hidden_states=conditioning, timestep=timesteps)
        velocity = head.action_decoder(pred[:, -head.action_horizon :])
        return actions + (1.0 / max(head.num_inference_timesteps, 1)) * velocity


@register(
    "vla_jepa/backbone",
    "VLA-JEPA backbone: Qwen3-VL (vision + deepstack + M-RoPE text) -> embodied-action token states",
    slow=True,
    reduced=_REDUCED,
    notes="one 224x224 image (49 tokens) + 16 text ids; local reduced Qwen3-VL",
)
def vla_jepa_backbone():
    model, _ = _model()
    inputs, positions = _backbone_inputs(model)
    return _Backbone(model, positions), inputs


@register(
    "vla_jepa/action_step",
    "VLA-JEPA one flow-matching step: action/state encoders + cross-attention DiT + action decoder",
    slow=True,
    reduced=_REDUCED,
    notes="embodied-action token states given as inputs; step loop outside",
)
def vla_jepa_action_step():
    model, config = _model()
    inputs, positions = _backbone_inputs(model)
    with torch.no_grad():
        cond = _Backbone(model, positions).eval()(*inputs)
    head = model.action_model
    actions = torch.randn(1, head.action_horizon, config.action_dim)
    return _Step(model), (cond, actions, torch.randn(1, 1, 8), torch.zeros(1, dtype=torch.long))
