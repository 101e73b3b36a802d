"""WALL-OSS (wall_x), reduced: multimodal prefix embedding and one flow-matching step.

``WallXPolicy.__init__`` always calls ``Qwen2_5_VLMoEForAction.from_pretrained``
on ``x-square-robot/wall-oss-flow`` (hub config, processor and weights), with no
local-config path. The network itself, ``Qwen2_5_VLMoEForAction``, takes a
config and a processor; vkbench builds it directly from a reduced
``Qwen2_5_VLConfig`` written here and a stub processor (the model only asks its
tokenizer for the ids of ``<|action|>`` and ``<|propri|>``); lerobot's own tests
build its MoE text model from a tiny config the same way. Weights are random,
float32 (the policy casts most of them to bfloat16; the one explicit bfloat16
cast in ``predict``, of the proprioception embedding, becomes a cast to the
embedding dtype). The processor stays outside: token ids, flattened patches and
the image grid are inputs.

Unlike pi0/SmolVLA/EO-1, WALL-OSS keeps no K/V cache between denoising steps:
``predict(predict_mode="diffusion")`` embeds the prompt once (token embedding,
vision tower, proprioception projection, M-RoPE ids), then every step of the
Euler ``odeint`` writes the action-head embedding of the noisy chunk into the
``<|action|>`` slots and runs the whole MoE backbone over the full sequence
(action tokens attend bidirectionally among themselves and go to the action
expert). So the prefix entry ends at the embeddings, and the denoise entry
holds the backbone.

The glue in both wrappers is copied from ``predict`` (its code is inline there,
not a method), data-dependent checks included; the layers are lerobot's.

Needs the ``lerobot[wallx]`` extra (peft, torchdiffeq, qwen-vl-utils): without it
lerobot swaps the Qwen2.5-VL base classes for ``nn.Module``, so the builders
raise an ImportError saying so.
"""

from __future__ import annotations

from types import MethodType, SimpleNamespace

import torch
from torch import Tensor, nn

from vkbench.workloads.policies.registry import register

_REDUCED = (
    "Qwen2.5-VL MoE: text 2 layers x 64, 4 heads x 16, 2 KV heads, M-RoPE sections 4/2/2, 2 hard-routed "
    "experts (MLP 128) (wall-oss-flow: Qwen2.5-VL-3B backbone, 36 x 2048, 16 heads, 2 KV heads); vision "
    "2 blocks x 64, 4 heads (full 32 x 1280), window + full attention kept; vocab 256 (full 151k); "
    "7-DoF action and proprioception (lerobot pads to 20)"
)
_EXTRA = "lerobot[wallx]"
_DEPS = (("transformers", None), ("peft", None), ("torchdiffeq", None), ("qwen-vl-utils", "qwen_vl_utils"))
_DOF = 7
# Token ids of the reduced vocabulary (the real ones are Qwen's 151k ids + Wall-X's added tokens).
_IMAGE, _VIDEO, _VISION_START, _VISION_END, _ACTION, _PROPRI = 250, 251, 252, 253, 254, 255
_GRID = (1, 18, 18)  # one camera: 256x256 -> smart_resize 252x252, patch 14 -> 324 patches -> 81 tokens
_PROMPT, _INSTRUCTION, _ASSISTANT = 24, 24, 5  # text ids before the image, after it, before the actions

CONFIG = {
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rope_scaling": {"type": "mrope", "mrope_section": [4, 2, 2]},
    "num_experts": 2,
    "experts": [{"hidden_size": 64, "intermediate_size": 128, "hidden_act": "silu"}] * 2,
    "dim_inputs": [64, 64],
    "mlp_moe": True,
    "dof_config": {"arm": _DOF},
    "agent_pos_config": {"arm": _DOF},
    "image_token_id": _IMAGE,
    "video_token_id": _VIDEO,
    "vision_start_token_id": _VISION_START,
    "vision_end_token_id": _VISION_END,
    "vision_config": {
        "depth": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_heads": 4,
        "out_hidden_size": 64,
        "fullatt_block_indexes": [1],
    },
}


def _require_extra() -> None:
    """Raise ImportError naming ``lerobot[wallx]`` when its packages are missing."""
    from lerobot.utils import import_utils

    missing = [name for name, module in _DEPS if not import_utils.is_package_available(name, module)]
    if missing or not import_utils._wallx_deps_available:  # noqa: SLF001 - lerobot's own gate
        raise ImportError(
            f"wall_x needs {', '.join(missing) or 'its optional dependencies'} "
            f"(pip install '{_EXTRA}'); without them lerobot cannot build Qwen2_5_VLMoEForAction"
        )


def _model() -> nn.Module:
    _require_extra()
    from lerobot.policies.wall_x.modeling_wall_x import Qwen2_5_VLMoEForAction
    from lerobot.policies.wall_x.qwen_model import Qwen2_5_VLConfig

    config = Qwen2_5_VLConfig(**CONFIG)
    config._attn_implementation = "eager"  # noqa: SLF001 - the only one Wall-X accepts
    ids = {"<|action|>": _ACTION, "<|propri|>": _PROPRI}
    processor = SimpleNamespace(tokenizer=SimpleNamespace(convert_tokens_to_ids=ids.__getitem__))
    return Qwen2_5_VLMoEForAction(config, processor=processor).float().eval()


def _prefix_inputs(chunk: int) -> tuple[Tensor, ...]:
    """The processor's output for one camera and the diffusion prompt (see ``get_wallx_normal_text``)."""
    t, h, w = _GRID
    ids = [
        *range(10, 10 + _PROMPT), _VISION_START, *[_IMAGE] * (t * h * w // 4), _VISION_END,
        *range(40, 40 + _INSTRUCTION), _PROPRI, *range(70, 70 + _ASSISTANT), *[_ACTION] * chunk,
    ]
    input_ids = torch.tensor(ids)[None]
    vision = CONFIG["vision_config"]
    patch = 3 * vision.get("temporal_patch_size", 2) * vision.get("patch_size", 14) ** 2
    return (
        input_ids,
        torch.ones_like(input_ids),
        torch.randn(t * h * w, patch),
        torch.tensor([_GRID]),
        torch.randn(1, 1, _DOF),
        torch.ones(1, 1, _DOF),
    )


class _Prefix(nn.Module):
    """``predict`` before the Euler loop: token + vision + proprioception embeddings, M-RoPE position ids."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Tensor, attention_mask: Tensor, pixel_values: Tensor, image_grid_thw: Tensor,
                proprioception: Tensor, agent_pos_mask: Tensor):
        model = self.model
        inputs_embeds = model.model.embed_tokens(input_ids)
        pixel_values = pixel_values.type(model.visual.dtype)
        image_embeds = model.visual(pixel_values, grid_thw=image_grid_thw).pooler_output
        n_image_tokens = (input_ids == model.config.image_token_id).sum().item()
        if n_image_tokens != image_embeds.shape[0]:
            raise ValueError(
                f"Image features and image tokens do not match: tokens: {n_image_tokens}, "
                f"features {image_embeds.shape[0]}"
            )
        image_mask = (input_ids == model.config.image_token_id).unsqueeze(-1).expand_as(inputs_embeds)
        inputs_embeds = inputs_embeds.masked_scatter(image_mask, image_embeds.to(inputs_embeds.dtype))
        proprio_embed = model.action_preprocessor.proprioception_proj(
            proprioception.to(inputs_embeds.dtype), agent_pos_mask.to(inputs_embeds.dtype)
        )
        proprioception_mask = input_ids == model.action_token_id_set["propri_token_id"]
        # predict() casts to bfloat16, the dtype of the policy's embeddings; here they are float32.
        proprio_embed = proprio_embed.to(inputs_embeds.dtype)
        inputs_embeds[proprioception_mask] = proprio_embed.reshape(-1, inputs_embeds.shape[-1])
        position_ids, _ = model.get_rope_index(input_ids, image_grid_thw, None, None, attention_mask)
        return inputs_embeds, position_ids


class _DenoiseStep(nn.Module):
    """``predict``'s ``step`` (what ``odeint`` integrates): action head, MoE backbone, velocity projection."""

    def __init__(self, model: nn.Module, chunk: int) -> None:
        super().__init__()
        self.model = model
        self.chunk = chunk

    #: ``predict`` asserts the prompt has action tokens (a data-dependent guard torch.export refuses).
    check_action_tokens = True

    def forward(self, timestep: Tensor, noisy_action: Tensor, dof_mask: Tensor, input_ids: Tensor,
                attention_mask: Tensor, inputs_embeds: Tensor, position_ids: Tensor, moe_token_types: Tensor):
        model = self.model
        batch_size, action_dim = noisy_action.shape[0], noisy_action.shape[-1]
        action_mask = input_ids == model.action_token_id_set["action_token_id"]
        if self.check_action_tokens:
            assert action_mask.any(), "No action token found in input_ids"
        timestep = timestep.unsqueeze(0).repeat(noisy_action.shape[0])
        action_embed = model.action_preprocessor.step(timestep=timestep, noisy_action=noisy_action,
                                                      dof_mask=dof_mask)
        action_embed = action_embed.reshape(-1, inputs_embeds.shape[-1]).to(dtype=inputs_embeds.dtype)
        temp_inputs_embeds = inputs_embeds.clone()
        temp_inputs_embeds[action_mask] = action_embed
        hidden_states = model.model(
            input_ids=None, attention_mask=attention_mask, position_ids=position_ids, past_key_values=None,
            inputs_embeds=temp_inputs_embeds, moe_token_types=moe_token_types, use_cache=True,
            output_attentions=False, output_hidden_states=False, return_dict=True,
        ).last_hidden_state
        action_hidden_states = hidden_states[action_mask].to(torch.float32)
        pred = model.action_preprocessor.action_proj_back(action_hidden_states)
        return pred.reshape(batch_size, self.chunk, action_dim)


def _moe_without_empty_expert_skip(self: nn.Module, hidden_states: Tensor, experts_indices: Tensor) -> Tensor:
    """``SparseMoeBlock.forward`` minus its ``if mask.sum() == 0: continue``: the data-dependent branch
    export refuses (an expert with no tokens then processes an empty selection, which changes nothing)."""
    output = torch.zeros_like(hidden_states)
    for expert_idx, expert in enumerate(self.experts):
        mask = experts_indices == expert_idx
        dim_input = self.dim_inputs[expert_idx]
        processed = expert(hidden_states[mask][:, :dim_input])
        batch_indices, seq_indices = torch.where(mask)
        output[batch_indices, seq_indices, :dim_input] = processed
    return output


class _DenoiseStepWithoutGuards(_DenoiseStep):
    """:class:`_DenoiseStep` with the two data-dependent guards removed (see the entry's notes)."""

    check_action_tokens = False

    def __init__(self, model: nn.Module, chunk: int) -> None:
        super().__init__(model, chunk)
        from lerobot.policies.wall_x.qwen_model.qwen2_5_vl_moe import SparseMoeBlock

        for module in model.modules():
            if isinstance(module, SparseMoeBlock):
                module.forward = MethodType(_moe_without_empty_expert_skip, module)


def _chunk() -> int:
    from lerobot.policies.wall_x.configuration_wall_x import WallXConfig

    return WallXConfig.chunk_size  # 32 action tokens, the flow horizon


@register(
    "wall_x/prefix",
    "WALL-OSS prefix: Qwen2.5-VL vision tower + token embedding + proprioception projection -> prompt "
    "embeddings and M-RoPE position ids",
    slow=True, reduced=_REDUCED,
    notes="one 256x256 camera (252x252 after smart_resize: 324 patches, 81 tokens), 53 text ids, 1 proprio "
    "and 32 action slots; processor outside; Qwen2_5_VLMoEForAction built from a local config and a stub "
    "processor (WallXPolicy.__init__ always loads the hub checkpoint); needs lerobot[wallx]",
)
def wall_x_prefix():
    model, chunk = _model(), _chunk()
    return _Prefix(model), _prefix_inputs(chunk)


@register(
    "wall_x/denoise_step",
    "WALL-OSS one flow-matching step: action head (noisy chunk + time) into the action slots, Qwen2.5-VL "
    "MoE backbone over the whole sequence (no K/V cache), velocity projection",
    slow=True, reduced=_REDUCED,
    notes="prompt embeddings and M-RoPE ids from wall_x/prefix given as inputs; the 10-step Euler odeint "
    "loop stays outside; needs lerobot[wallx]",
)
def wall_x_denoise_step():
    return _denoise_step(_DenoiseStep)


@register(
    "wall_x/denoise_step_without_guards",
    "WALL-OSS flow-matching step, rewritten to export: wall_x/denoise_step minus two data-dependent guards",
    slow=True, reduced=_REDUCED,
    notes="rewrite: (1) no `assert action_mask.any()` (the prompt always holds the 32 action slots), "
    "(2) SparseMoeBlock runs every expert without `if mask.sum() == 0: continue` (an expert with no "
    "tokens processes an empty selection); nothing else differs from wall_x/denoise_step",
)
def wall_x_denoise_step_without_guards():
    return _denoise_step(_DenoiseStepWithoutGuards)


def _denoise_step(kind: type[_DenoiseStep]) -> tuple[nn.Module, tuple[Tensor, ...]]:
    model, chunk = _model(), _chunk()
    inputs = _prefix_inputs(chunk)
    with torch.no_grad():
        inputs_embeds, position_ids = _Prefix(model).eval()(*inputs)
    input_ids, attention_mask = inputs[0], inputs[1]
    moe_token_types = input_ids == _ACTION  # as WallXPolicy.preprocess_inputs builds them
    return kind(model, chunk), (
        torch.tensor(0.5), torch.randn(1, chunk, _DOF), torch.ones(1, chunk, _DOF), input_ids,
        attention_mask, inputs_embeds, position_ids, moe_token_types,
    )
