"""EO-1, reduced: Qwen2.5-VL prefix (vision + text + state -> K/V) and one flow-matching step.

``EO1Policy.__init__`` builds the backbone from ``config.vlm_config`` (a
``Qwen2_5_VLConfig`` dict) when ``pretrained_path`` is set, and downloads
``vlm_base`` otherwise. vkbench gives a reduced ``vlm_config`` in code and sets
``pretrained_path`` to a marker (nothing is read from it in ``__init__``), so
no hub call happens. The processor stays outside: token ids (with the state
and action placeholder ids), flattened patches and the image grid are inputs.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_REDUCED = (
    "Qwen2.5-VL: text 2 layers x 256, 4 heads x 64, 2 KV heads (3B: 36 x 2048, 16 heads); vision 2 blocks "
    "x 128 (full 32 x 1280), window + full attention kept, M-RoPE sections 16/8/8; vocab 151936 kept"
)
_STATE_ID, _ACTION_ID = 151665, 151666  # placeholder ids the EO-1 processor inserts (free slots here)
_GRID = (1, 16, 16)  # one 224x224 image, patch 14 -> 256 patches -> 64 tokens
_TEXT = 16

VLM_CONFIG = {
    "text_config": {
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 8, 8]},
    },
    "vision_config": {
        "depth": 2,
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_heads": 2,
        "out_hidden_size": 256,
        "fullatt_block_indexes": [1],
    },
}


def _policy():
    from lerobot.policies.eo1.configuration_eo1 import EO1Config
    from lerobot.policies.eo1.modeling_eo1 import EO1Policy

    config = EO1Config(
        device="cpu",
        dtype="float32",
        vlm_config=VLM_CONFIG,
        pretrained_path="vkbench-local",
        attn_implementation="eager",
    )
    configure(
        config,
        state=config.max_state_dim,
        action=config.max_action_dim,
        images={"observation.images.top": (3, 224, 224)},
    )
    return EO1Policy(config).model.float().eval(), config


def _inputs(model, config) -> tuple[tuple[Tensor, ...], int]:
    cfg = model.vlm_backbone.config
    t, h, w = _GRID
    image = [cfg.vision_start_token_id, *[cfg.image_token_id] * (t * h * w // 4), cfg.vision_end_token_id]
    ids = torch.tensor([*range(100, 100 + _TEXT), *image, _STATE_ID, *[_ACTION_ID] * config.chunk_size])[None]
    mm = torch.zeros_like(ids, dtype=torch.int32)
    mm[ids == cfg.image_token_id] = 1
    patch = 3 * cfg.vision_config.temporal_patch_size * cfg.vision_config.patch_size**2
    act_start = ids.shape[1] - config.chunk_size
    return (
        ids,
        torch.ones_like(ids),
        torch.randn(t * h * w, patch),
        torch.tensor([_GRID]),
        mm,
        torch.randn(1, config.max_state_dim),
    ), act_start


class _Prefix(nn.Module):
    """``sample_actions`` steps 1-2: embed the prefix, M-RoPE ids, Qwen2.5-VL over it -> K/V cache."""

    def __init__(self, model: nn.Module, act_start: int) -> None:
        super().__init__()
        self.model = model
        self.act_start = act_start

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor,
        pixel_values: Tensor,
        image_grid_thw: Tensor,
        mm_token_type_ids: Tensor,
        states: Tensor,
    ):
        model, a = self.model, self.act_start
        embeds = model.embed_prefix(
            input_ids, states=states, state_token_id=_STATE_ID, action_token_id=_ACTION_ID
        )
        position_ids, _ = model.vlm_backbone.model.get_rope_index(
            input_ids,
            image_grid_thw=image_grid_thw,
            attention_mask=attention_mask,
            mm_token_type_ids=mm_token_type_ids,
        )
        out = model.vlm_backbone.model(
            input_ids=input_ids[:, :a],
            attention_mask=attention_mask[:, :a],
            position_ids=position_ids[..., :a],
            inputs_embeds=embeds[:, :a],
            pixel_values=pixel_values,
            image_grid_thw=image_grid_thw,
            mm_token_type_ids=mm_token_type_ids[:, :a],
            use_cache=True,
            return_dict=True,
        )
        flat: list[Tensor] = [position_ids]
        for keys, values, *_ in out.past_key_values:
            flat += [keys, values]
        return tuple(flat)


class _DenoiseStep(nn.Module):
    """One ``denoise_fn`` call: action/time suffix embedding, Qwen2.5-VL text layers on the prefix K/V."""

    def __init__(self, model: nn.Module, chunk: int) -> None:
        super().__init__()
        self.model = model
        self.chunk = chunk

    def forward(
        self, x_t: Tensor, timestep: Tensor, attention_mask: Tensor, position_ids: Tensor, *kv: Tensor
    ):
        from transformers import DynamicCache

        model = self.model
        cache = DynamicCache(tuple((kv[i], kv[i + 1]) for i in range(0, len(kv), 2)))
        embs = model.embed_suffix(timestep, x_t)
        out = model.vlm_backbone.model(
            attention_mask=attention_mask,
            past_key_values=cache,
            inputs_embeds=embs,
            position_ids=position_ids,
            use_cache=True,
            return_dict=True,
        )
        v_t = model.action_out_proj(out.last_hidden_state[:, : self.chunk])
        return v_t.reshape(x_t.shape)


@register(
    "eo1/prefix",
    "EO-1 prefix: Qwen2.5-VL vision tower + M-RoPE text model over image, language and state -> K/V",
    slow=True,
    reduced=_REDUCED,
    notes="one 224x224 image (64 tokens) + 16 text ids + state; processor outside",
)
def eo1_prefix():
    model, config = _policy()
    inputs, act_start = _inputs(model, config)
    return _Prefix(model, act_start), inputs


@register(
    "eo1/denoise_step",
    "EO-1 one flow-matching step: action/time MLP, Qwen2.5-VL text layers over the action span + prefix K/V",
    slow=True,
    reduced=_REDUCED,
    notes="prefix K/V and M-RoPE position ids given as inputs; Euler loop outside",
)
def eo1_denoise_step():
    model, config = _policy()
    inputs, a = _inputs(model, config)
    with torch.no_grad():
        position_ids, *kv = _Prefix(model, a).eval()(*inputs)
    end = a + config.chunk_size
    x_t = torch.randn(1, config.chunk_size, config.max_action_dim)
    return _DenoiseStep(model, config.chunk_size), (
        x_t,
        torch.tensor([0.5]),
        inputs[1][:, :end],
        position_ids[..., a:end].contiguous(),
        *kv,
    )
