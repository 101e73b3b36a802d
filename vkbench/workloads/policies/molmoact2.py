"""MolmoAct2 (Molmo VLM + per-layer flow-matching action expert), reduced: VLM prefix and one flow step.

``MolmoAct2Policy.__init__`` loads ``checkpoint_path``: a hub id by default
(``allenai/MolmoAct2``), but a local folder holding ``config.json`` and
``model.safetensors`` does as well. So vkbench writes one: the vendored
``MolmoAct2ForConditionalGeneration`` built from a reduced HF config written
here, random weights, ``save_pretrained`` into a temporary folder; then the
real ``MolmoAct2Policy.__init__`` loads it (key-for-key strict, as for the
released checkpoint) and the folder is deleted. No processor or tokenizer is
needed to build the policy (the pack-inputs step loads them, and it stays
outside): token ids are written by hand in the layout ``_build_robot_text``
and ``MolmoAct2Processor`` produce, and the image inputs come from lerobot's
own ``MolmoAct2ImageProcessor`` on random frames. ``model_dtype="float32"``
(the released default is bfloat16 under autocast).

What runs per action chunk (``predict_action_chunk`` -> continuous
``generate_actions_from_inputs``): one VLM pass over the image and text tokens
that keeps every layer's K/V, then the action expert's context (per-layer K/V
projections, key norm, cross-attention mask), then ``flow_matching_num_steps``
(10) Euler steps of ``ActionExpert.forward_with_context``, each cross-attending
to the VLM K/V of the same layer. So the prefix entry ends at the action
context and the denoise entry is one step of ``_run_action_flow_loop``. The
per-step modulations (time embedding and the adaLN linears) depend only on the
fixed timestep grid: lerobot computes them once and caches them on the action
expert across calls, so they are inputs of the step here, not part of it.

The glue in both wrappers is copied from ``generate_actions_from_inputs`` and
``_run_action_flow_loop``; the layers are lerobot's. Outputs travel between the
entries stacked per layer (``torch.stack`` / ``unbind``).

The prefix does not export: ``build_batched_images`` regroups the processor's
ragged image tensors per example with ``.item()``/``.tolist()``, and more
boolean-mask glue follows. ``molmoact2/prefix_fixed_layout`` is the same
computation without that glue (its notes list each change; a test checks it
bit-for-bit against the prefix).
"""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.offline_build import hub_entry
from vkbench.workloads.policies.registry import register

hub_entry("molmoact2", "model", "MolmoAct2: Molmo VLM + action expert",
          notes="the default policy: __init__ loads checkpoint_path, a hub id by default; the entries "
          "below write a reduced checkpoint folder and load that instead")

_REDUCED = (
    "text 2 layers x 64, 4 heads x 16, 2 KV heads, MLP 128, vocab 256+64 (vendored config defaults: "
    "48 x 3584, 28 heads x 128, 4 KV heads, MLP 18944, vocab 152064+128); action expert 2 x 64, 4 heads "
    "(1024 wide, 16 heads, one block per text layer); ViT 2 blocks x 64, 4 heads, 112x112 input, 8x8 "
    "patches (SigLIP 27 x 1152, 378x378); pooling adapter 64 wide; two cameras, 16 image tokens each "
    "(released budget 196); 30-step chunk, 32 padded action dims, 10 flow steps kept"
)
_VOCAB = 256
# Special ids sit in the additional vocabulary, as in the released tokenizer (151936 + ...).
_IM_START, _IM_END, _IM_PATCH, _IM_COL = _VOCAB, _VOCAB + 1, _VOCAB + 2, _VOCAB + 3
_LOW_RES_START, _IM_LOW_RES, _FRAME_START, _FRAME_END = _VOCAB + 4, _VOCAB + 6, _VOCAB + 7, _VOCAB + 8
_ACTION_OUTPUT, _ACTION_START, _ACTION_END, _EOS = _VOCAB + 9, _VOCAB + 10, _VOCAB + 11, _VOCAB + 12
_STATE_START, _STATE_END = _VOCAB + 13, _VOCAB + 14
#: What ``MolmoAct2Processor`` marks in ``token_type_ids`` (bidirectional attention among them).
_IMAGE_TOKENS = (_IM_PATCH, _IM_COL, _IM_START, _LOW_RES_START, _FRAME_START, _IM_END, _FRAME_END,
                 _IM_LOW_RES)
_SIZE = 112
_CAMERAS = ("observation.images.top", "observation.images.wrist")
_STATE, _DOF = 8, 7

HF_CONFIG: dict[str, Any] = {
    "vit_config": {
        "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 4, "head_dim": 16, "image_default_input_size": (_SIZE, _SIZE),
        "image_num_pos": (_SIZE // 14) ** 2,
    },
    "adapter_config": {
        "vit_layers": (-1, -2), "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
        "head_dim": 16, "intermediate_size": 128, "text_hidden_size": 64,
    },
    "text_config": {
        "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "vocab_size": _VOCAB, "additional_vocab_size": 64, "num_hidden_layers": 2, "intermediate_size": 128,
        "max_position_embeddings": 512,
    },
    "action_expert_config": {
        "hidden_size": 64, "num_layers": 2, "num_heads": 4, "ffn_multiple_of": 64, "timestep_embed_dim": 64,
    },
    "image_start_token_id": _IM_START, "image_end_token_id": _IM_END, "image_patch_id": _IM_PATCH,
    "image_col_id": _IM_COL, "low_res_image_start_token_id": _LOW_RES_START, "image_low_res_id": _IM_LOW_RES,
    "frame_start_token_id": _FRAME_START, "frame_end_token_id": _FRAME_END,
    "action_output_token_id": _ACTION_OUTPUT, "action_start_token_id": _ACTION_START,
    "action_end_token_id": _ACTION_END, "eos_token_id": _EOS,
    "state_start_token_id": _STATE_START, "state_end_token_id": _STATE_END,
}


def _policy() -> Any:
    """The real ``MolmoAct2Policy``, loaded from a reduced random checkpoint written to a temporary folder."""
    from lerobot.policies.factory import make_policy_config
    from lerobot.policies.molmoact2.modeling_molmoact2 import MolmoAct2Policy
    from lerobot.policies.molmoact2.molmoact2_hf_model.configuration_molmoact2 import MolmoAct2Config
    from lerobot.policies.molmoact2.molmoact2_hf_model.modeling_molmoact2 import (
        MolmoAct2ForConditionalGeneration,
    )

    with tempfile.TemporaryDirectory(prefix="vkbench-molmoact2-") as folder:
        MolmoAct2ForConditionalGeneration(MolmoAct2Config(**HF_CONFIG)).save_pretrained(folder)
        config = make_policy_config("molmoact2", device="cpu", checkpoint_path=folder, model_dtype="float32",
                                    inference_action_mode="continuous")
        configure(config, state=_STATE, action=_DOF, images={key: (3, _SIZE, _SIZE) for key in _CAMERAS})
        return MolmoAct2Policy(config).eval()


def _image_tokens(grid: Tensor) -> list[int]:
    """``MolmoAct2Processor.get_image_tokens`` for a single-crop (``crop_mode="resize"``) grid."""
    rows, cols = int(grid[0]), int(grid[1])
    return [_IM_START, *([_IM_PATCH] * cols + [_IM_COL]) * rows, _IM_END]


def model_inputs() -> dict[str, Tensor]:
    """What the pack-inputs step hands ``predict_action_chunk``: two cameras, a state prompt, ids by hand.

    Layout of ``_build_robot_text`` after BOS: ``Image 1<|image|>Image 2<|image|><|im_start|>user\\n``,
    the task/setup/state/control sentence (state as ``<state_start>`` + 8 state tokens + ``<state_end>``),
    ``<|im_end|>\\n<|im_start|>assistant\\n<action_output>``; plain words are ids below 100.
    """
    from lerobot.policies.molmoact2.molmoact2_hf_model.image_processing_molmoact2 import (
        MolmoAct2ImageProcessor,
    )

    processor = MolmoAct2ImageProcessor(size={"height": _SIZE, "width": _SIZE}, crop_mode="resize")
    frames = np.random.default_rng(0).integers(0, 256, (len(_CAMERAS), _SIZE, _SIZE, 3), dtype=np.uint8)
    images = processor(list(frames), return_tensors="pt")
    ids = [1]  # BOS
    for camera, grid in enumerate(images["image_grids"]):
        ids += [2, 3, 4 + camera, *_image_tokens(grid)]  # "Image {n}" then the image
    ids += [5, 6, 7, *range(10, 40), _STATE_START, *range(100, 100 + _STATE), _STATE_END, *range(40, 70)]
    ids += [8, 9, 5, 11, 9, _ACTION_OUTPUT]
    input_ids = torch.tensor([ids])
    action_dim_is_pad = torch.ones(1, 32, dtype=torch.bool)
    action_dim_is_pad[:, :_DOF] = False
    return {
        "input_ids": input_ids,
        "pixel_values": images["pixel_values"],
        "image_token_pooling": images["image_token_pooling"],
        "image_grids": images["image_grids"],
        "image_num_crops": images["image_num_crops"],
        "attention_mask": torch.ones_like(input_ids),
        "token_type_ids": torch.isin(input_ids, torch.tensor(_IMAGE_TOKENS)).long(),
        "action_dim_is_pad": action_dim_is_pad,
    }


_PREFIX_KEYS = ("input_ids", "pixel_values", "image_token_pooling", "image_grids", "image_num_crops",
                "attention_mask", "token_type_ids")


class _Prefix(nn.Module):
    """``generate_actions_from_inputs`` before the flow loop: VLM pass keeping K/V, then action context."""

    def __init__(self, policy: Any) -> None:
        super().__init__()
        self.backbone = policy._backbone()  # lerobot's accessor (the HF MolmoAct2Model)
        # The text RoPE sin/cos table is built lazily by the first call (and checked with .item() until
        # then); every later call only indexes it. Build it now, as lerobot's CUDA-graph warm-up does.
        self.backbone.transformer.prepare_rope_cache(device="cpu")

    def forward(self, input_ids: Tensor, pixel_values: Tensor, image_token_pooling: Tensor,
                image_grids: Tensor, image_num_crops: Tensor, attention_mask: Tensor, token_type_ids: Tensor):
        backbone = self.backbone
        outputs = backbone(
            input_ids=input_ids, pixel_values=pixel_values, image_token_pooling=image_token_pooling,
            image_grids=image_grids, image_num_crops=image_num_crops, attention_mask=attention_mask,
            token_type_ids=token_type_ids, use_cache=True,
        )
        encoder_kv_states = backbone._extract_kv_states(outputs.past_key_values)
        encoder_attention_mask = backbone._get_encoder_attention_mask(input_ids, attention_mask)
        return _action_context(backbone, input_ids, encoder_kv_states, encoder_attention_mask)


def _action_context(backbone: nn.Module, input_ids: Tensor, encoder_kv_states: Any,
                    encoder_attention_mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The rest of ``generate_actions_from_inputs`` before the loop: depth gate, ``prepare_context``.

    Returns the per-layer context keys and values stacked, and the cross-attention mask."""
    action_expert = backbone._require_action_expert()
    depth_gate, depth_mask = backbone._depth_gate_from_condition(
        input_ids=input_ids, encoder_attention_mask=encoder_attention_mask, layer_kv_states=encoder_kv_states,
    )
    encoder_kv_states = backbone._apply_depth_gate_to_layer_kv_states(encoder_kv_states, depth_mask,
                                                                      depth_gate)
    source = encoder_kv_states[0][0]
    context = action_expert.prepare_context(
        encoder_kv_states=encoder_kv_states, encoder_attention_mask=encoder_attention_mask,
        state_embeddings=None, batch_size=source.shape[0], seq_len=backbone.config.max_action_horizon,
        device=source.device, dtype=action_expert.action_embed.weight.dtype,
    )
    keys = torch.stack([k for k, _ in context.kv_contexts])
    values = torch.stack([v for _, v in context.kv_contexts])
    return keys, values, context.cross_mask


def _vision_features(vision: nn.Module, images: Tensor, pooled_patches_idx: Tensor) -> Tensor:
    """``MolmoAct2VisionBackbone.forward`` for float pixels, minus its last ``[valid_token.flatten()]``."""
    batch_size = images.shape[0]
    images = torch.round(((images.to(dtype=torch.float32) + 1.0) * 0.5) * 255.0)
    images = torch.clamp(images, 0.0, 255.0) / 255.0
    images = (images * 2.0 - 1.0).to(dtype=vision.dtype)
    image_features = vision.image_feature_dropout(vision.encode_image(images))
    dim = image_features.shape[-1]
    valid = pooled_patches_idx >= 0
    batch_idx = torch.arange(pooled_patches_idx.shape[0], dtype=torch.long, device=pooled_patches_idx.device)
    batch_idx = torch.tile(batch_idx.view(batch_size, 1, 1),
                           [1, pooled_patches_idx.shape[1], pooled_patches_idx.shape[2]])
    to_pool = image_features.reshape(batch_size, -1, dim)[batch_idx, torch.clip(pooled_patches_idx, 0)]
    to_pool = to_pool * valid.to(vision.dtype)[:, :, :, None]
    to_pool = to_pool.reshape([-1, pooled_patches_idx.shape[-1], dim])
    if vision.adapter_config.pooling_attention_mask:
        attn_mask = valid.reshape([-1, 1, 1, valid.shape[-1]])
        denom = valid.view(-1, to_pool.shape[-2]).float().sum(-1)
        denom = torch.where(denom == 0, 1, denom)
        query = to_pool.sum(-2, keepdim=True) / denom[:, None, None].to(to_pool.dtype)
    else:
        attn_mask = None
        query = to_pool.mean(-2, keepdim=True)
    pooled = vision.image_pooling_2d(query, to_pool, attn_mask=attn_mask)
    pooled = vision.image_projector(pooled.reshape([batch_size, -1, pooled.shape[-1]]))
    return pooled.view(-1, pooled.shape[-1])


class _PrefixFixedLayout(_Prefix):
    """:class:`_Prefix` without its data-dependent glue (see the ``molmoact2/prefix_fixed_layout`` notes)."""

    def forward(self, input_ids: Tensor, images: Tensor, token_pooling: Tensor,  # type: ignore[override]
                attention_mask: Tensor, token_type_ids: Tensor):
        backbone = self.backbone
        # MolmoAct2Model.build_input_embeddings, image features added at the <im_patch> ids by running count.
        input_ids = input_ids * (input_ids != -1).to(input_ids.dtype)
        x = backbone.transformer.wte(input_ids)
        features = _vision_features(backbone.vision_backbone, images, token_pooling).to(x.dtype)
        flat_x = x.reshape(-1, x.shape[-1])
        is_patch = input_ids.reshape(-1) == backbone.config.image_patch_id
        nth = (torch.cumsum(is_patch.long(), 0) - 1).clamp(min=0)
        flat_x = torch.where(is_patch[:, None], flat_x + features[nth], flat_x)
        inputs_embeds = backbone.transformer.emb_drop(flat_x.reshape_as(x))
        # MolmoAct2Model.forward, past_key_values None.
        cache_position = torch.arange(0, inputs_embeds.shape[1], device=inputs_embeds.device)
        bias = backbone._build_native_attention_bias(inputs_embeds=inputs_embeds,
                                                      attention_mask=attention_mask,
                                                      token_type_ids=token_type_ids, past_key_values=None)
        outputs = backbone.transformer(attention_mask=bias, inputs_embeds=inputs_embeds, use_cache=True,
                                       cache_position=cache_position)
        encoder_kv_states = backbone._extract_kv_states(outputs.past_key_values)
        # _get_encoder_attention_mask minus the <action_start>..<action_end> span search (none in a prompt).
        encoder_attention_mask = attention_mask.to(dtype=torch.bool)
        if backbone.config.action_mode == "both" and backbone.config.eos_token_id is not None:
            eos = input_ids != int(backbone.config.eos_token_id)
            encoder_attention_mask = encoder_attention_mask & eos
        return _action_context(backbone, input_ids, encoder_kv_states, encoder_attention_mask)


def fixed_layout_inputs(policy: Any, inputs: dict[str, Tensor]) -> tuple[Tensor, ...]:
    """The rewrite's inputs: lerobot's ``merge_visual_inputs`` run eagerly on the processor's outputs."""
    images, token_pooling = policy._backbone().merge_visual_inputs(
        **{key: inputs[key] for key in ("input_ids", "pixel_values", "image_token_pooling", "image_grids",
                                        "image_num_crops")})
    return inputs["input_ids"], images, token_pooling, inputs["attention_mask"], inputs["token_type_ids"]


def stacked_modulation(action_expert: nn.Module, timestep: Tensor) -> Tensor:
    """One entry of lerobot's modulation cache (``prepare_modulation_cache``), stacked:
    conditioning, 9 adaLN chunks per block, the final layer's 2."""
    (step,) = action_expert.prepare_modulation_cache([timestep])
    blocks = [chunk for block in step.block_modulations for chunk in block]
    return torch.stack([step.conditioning, *blocks, *step.final_modulation])


class _DenoiseStep(nn.Module):
    """One iteration of ``_run_action_flow_loop``: velocity from the action expert, masked Euler update."""

    def __init__(self, policy: Any, steps: int) -> None:
        super().__init__()
        self.backbone = policy._backbone()
        self.dt = 1.0 / steps
        expert = self.backbone._require_action_expert()
        rope = expert.blocks[0].self_attn.rope
        # prepare_context builds these once per chunk from a constant (the horizon): buffers here.
        cos, sin = rope.build_cache(seq_len=self.backbone.config.max_action_horizon,
                                    device=torch.device("cpu"), dtype=expert.action_embed.weight.dtype)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, trajectory: Tensor, modulation: Tensor, keys: Tensor, values: Tensor,
                cross_mask: Tensor, action_dim_is_pad: Tensor) -> Tensor:
        from lerobot.policies.molmoact2.molmoact2_hf_model.modeling_molmoact2 import (
            ActionExpertContext,
            ActionExpertStepModulation,
        )

        backbone = self.backbone
        action_expert = backbone._require_action_expert()
        chunks = modulation.unbind(0)
        blocks = len(action_expert.blocks)
        step = ActionExpertStepModulation(
            conditioning=chunks[0],
            block_modulations=[tuple(chunks[1 + 9 * i: 10 + 9 * i]) for i in range(blocks)],
            final_modulation=tuple(chunks[-2:]),
        )
        context = ActionExpertContext(
            kv_contexts=list(zip(keys.unbind(0), values.unbind(0), strict=True)), cross_mask=cross_mask,
            self_mask=None, valid_action=None, rope_cache=(self.rope_cos, self.rope_sin),
        )
        mask_enabled = backbone.config.mask_action_dim_padding
        velocity = action_expert.forward_with_context(trajectory, step.conditioning, context=context,
                                                      modulation=step)
        velocity = backbone._mask_action_dim_tensor(velocity, action_dim_is_pad=action_dim_is_pad,
                                                    enabled=mask_enabled)
        trajectory = trajectory + self.dt * velocity
        return backbone._mask_action_dim_tensor(trajectory, action_dim_is_pad=action_dim_is_pad,
                                                enabled=mask_enabled)


def _steps(policy: Any) -> int:
    """``generate_actions_from_inputs``'s step count: the policy's, else the checkpoint's (10)."""
    return int(policy.config.num_inference_steps or policy._backbone().config.flow_matching_num_steps)


@register(
    "molmoact2/prefix",
    "MolmoAct2 prefix: Molmo ViT + attention pooling adapter + text transformer over image and text tokens "
    "(K/V of every layer kept) -> action-expert context (K/V projections, key norm, cross-attention mask)",
    slow=True, reduced=_REDUCED,
    notes="MolmoAct2Policy built by its own __init__ from a reduced random checkpoint written to a temporary "
    "folder; two 112x112 cameras through lerobot's MolmoAct2ImageProcessor (crop_mode resize), 130 token ids "
    "written by hand in the processor's layout; the flow loop stays outside",
)
def molmoact2_prefix() -> tuple[nn.Module, tuple[Tensor, ...]]:
    inputs = model_inputs()
    return _Prefix(_policy()), tuple(inputs[key] for key in _PREFIX_KEYS)


@register(
    "molmoact2/prefix_fixed_layout",
    "MolmoAct2 prefix, rewritten to export: molmoact2/prefix minus its data-dependent glue",
    slow=True, reduced=_REDUCED,
    notes="rewrite: (1) merge_visual_inputs (build_batched_images: counts images from <im_end> ids and "
    "batches the processor's crops and pooling indices per example with .item()/.tolist()) runs outside, "
    "on the processor's outputs, and its result (images, token_pooling) is the input; (2) the vision "
    "backbone keeps every pooled token instead of `[valid_token.flatten()]` (each has a valid patch); (3) "
    "build_input_embeddings adds the n-th image feature at the n-th <im_patch> id by a running count "
    "instead of boolean-mask assignment, and drops its count check; (4) the encoder mask skips the per-row "
    "<action_start>..<action_end> span search (nonzero().tolist(); a prompt has no such span); the layers "
    "and every other op are molmoact2/prefix's",
)
def molmoact2_prefix_fixed_layout() -> tuple[nn.Module, tuple[Tensor, ...]]:
    policy = _policy()
    return _PrefixFixedLayout(policy), fixed_layout_inputs(policy, model_inputs())


@register(
    "molmoact2/denoise_step",
    "MolmoAct2 one flow-matching step: action expert (self-attention with RoPE, cross-attention to each VLM "
    "layer's K/V, adaLN-modulated SwiGLU) -> velocity, masked Euler update of the 30x32 chunk",
    slow=True, reduced=_REDUCED,
    notes="action context from molmoact2/prefix and the step's cached modulation (time embedding + adaLN "
    "linears, computed once per timestep grid by lerobot) are inputs; the 10-step loop stays outside",
)
def molmoact2_denoise_step() -> tuple[nn.Module, tuple[Tensor, ...]]:
    policy = _policy()
    inputs = model_inputs()
    with torch.no_grad():
        keys, values, cross_mask = _Prefix(policy)(*(inputs[key] for key in _PREFIX_KEYS))
        expert = policy._backbone()._require_action_expert()
        modulation = stacked_modulation(expert, torch.zeros(1))
    horizon = policy._backbone().config.max_action_horizon
    trajectory = torch.randn(1, horizon, 32).masked_fill(inputs["action_dim_is_pad"][:, None, :], 0)
    return _DenoiseStep(policy, _steps(policy)), (
        trajectory, modulation, keys, values, cross_mask, inputs["action_dim_is_pad"],
    )
