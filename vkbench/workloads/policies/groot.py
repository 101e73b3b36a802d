"""GR00T N1.7, reduced: Qwen3-VL backbone features and one flow-matching step of the DiT action head.

``GrootPolicy.__init__`` calls ``GR00TN17.from_pretrained(base_model_path)``,
which falls back to a local path when it is not a hub repo id. vkbench saves
a reduced, randomly initialised ``GR00TN17`` (its backbone built from a local
reduced ``Qwen3VLConfig`` folder) into a temporary folder and passes that
path: no hub call, no monkeypatch. Tokenizer and image processor stay
outside (token ids and flattened patches are inputs).
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
    "Qwen3-VL: text 2 layers x 256, 4 heads x 64, 2 KV heads (Cosmos-Reason2-2B: 16 used layers x 2048); "
    "vision 2 blocks x 128 with deepstack at both (full 24 x 1024); vl_self_attention 2 layers x 256 "
    "(full 4 x 2048); DiT 2 layers, 4 heads x 64 (full 32 layers, 32 x 48); vocab 151936 kept"
)
_GRID = (1, 14, 14)  # one 224x224 image, patch 16 -> 196 patches -> 49 tokens after 2x2 merge
_TEXT = 16


def _diffusion_cfg() -> dict:
    return {"positional_embeddings": None, "num_layers": 2, "num_attention_heads": 4,
            "attention_head_dim": 64, "norm_type": "ada_norm", "dropout": 0.0, "final_dropout": True,
            "output_dim": 256, "interleave_self_attention": True}


@cache
def groot_dir() -> str:
    """A local folder with a reduced random-weight GR00T N1.7 (written once per process)."""
    from lerobot.policies.groot.groot_n1_7 import GR00TN17, GR00TN17Config
    from transformers import Qwen3VLConfig

    qwen = Path(tempfile.mkdtemp(prefix="vkbench-qwen3vl-"))
    Qwen3VLConfig(
        text_config={"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 151936,
                     "rope_scaling": {"rope_type": "default", "mrope_section": [12, 10, 10],
                                      "mrope_interleaved": True}},
        vision_config={"depth": 2, "hidden_size": 128, "intermediate_size": 256, "num_heads": 2,
                       "out_hidden_size": 256, "deepstack_visual_indexes": [0, 1], "patch_size": 16},
    ).save_pretrained(qwen)
    config = GR00TN17Config(
        model_name=str(qwen), backbone_embedding_dim=256, select_layer=2, hidden_size=256,
        input_embedding_dim=256, model_dtype="float32", dtype="float32", diffusion_model_cfg=_diffusion_cfg(),
        vl_self_attention_cfg={"positional_embeddings": None, "num_layers": 2, "num_attention_heads": 4,
                               "attention_head_dim": 64, "dropout": 0.0, "final_dropout": True},
    )
    torch.manual_seed(0)
    folder = Path(tempfile.mkdtemp(prefix="vkbench-groot-"))
    GR00TN17(config, load_backbone_weights=False).save_pretrained(folder)
    return str(folder)


def _model():
    from lerobot.policies.groot.configuration_groot import GrootConfig
    from lerobot.policies.groot.modeling_groot import GrootPolicy

    config = GrootConfig(device="cpu", base_model_path=groot_dir())
    configure(config, state=8, action=7, images={"observation.images.top": (3, 224, 224)})
    return GrootPolicy(config)._groot_model.float().eval()  # noqa: SLF001 - the GR00T N1.7 network


class _Backbone(nn.Module):
    """``backbone(...)`` then the action head's ``_encode_features`` (VL-LN, VL self-attention, state)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Tensor, attention_mask: Tensor, pixel_values: Tensor, image_grid_thw: Tensor,
                state: Tensor, embodiment_id: Tensor):
        from transformers.feature_extraction_utils import BatchFeature

        out = self.model.backbone(BatchFeature(data={
            "input_ids": input_ids, "attention_mask": attention_mask, "pixel_values": pixel_values,
            "image_grid_thw": image_grid_thw}))
        feats = self.model.action_head._encode_features(  # noqa: SLF001
            out, BatchFeature(data={"state": state, "embodiment_id": embodiment_id}))
        return (feats["backbone_features"], feats["state_features"], out["image_mask"],
                out["backbone_attention_mask"])


class _Step(nn.Module):
    """One iteration of ``get_action_with_features``: action encoder, DiT, action decoder, Euler update."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.head = model.action_head

    def forward(self, actions: Tensor, timestep: Tensor, vl_embeds: Tensor, state_features: Tensor,
                image_mask: Tensor, backbone_attention_mask: Tensor, embodiment_id: Tensor) -> Tensor:
        head = self.head
        action_features = head.action_encoder(actions, timestep, embodiment_id)
        if head.config.add_pos_embed:
            pos_ids = torch.arange(action_features.shape[1], dtype=torch.long, device=actions.device)
            action_features = action_features + head.position_embedding(pos_ids).unsqueeze(0)
        sa_embs = torch.cat((state_features, action_features), dim=1)
        out = head.model(hidden_states=sa_embs, encoder_hidden_states=vl_embeds, timestep=timestep,
                         image_mask=image_mask, backbone_attention_mask=backbone_attention_mask)
        pred = head.action_decoder(out, embodiment_id)
        return actions + (1.0 / head.num_inference_timesteps) * pred[:, -head.action_horizon:]


def _backbone_inputs(model) -> tuple[Tensor, ...]:
    cfg = model.backbone.model.config
    t, h, w = _GRID
    merged = t * h * w // 4
    ids = torch.cat([torch.randint(0, 1000, (_TEXT // 2,)), torch.tensor([cfg.vision_start_token_id]),
                     torch.full((merged,), cfg.image_token_id), torch.tensor([cfg.vision_end_token_id]),
                     torch.randint(0, 1000, (_TEXT // 2,))])[None]
    patch = 3 * cfg.vision_config.temporal_patch_size * cfg.vision_config.patch_size ** 2
    state = torch.randn(1, 1, model.config.max_state_dim)
    return (ids, torch.ones_like(ids), torch.randn(t * h * w, patch), torch.tensor([_GRID]), state,
            torch.zeros(1, dtype=torch.long))


@register(
    "groot/backbone",
    "GR00T N1.7 backbone: Qwen3-VL (vision + deepstack + M-RoPE text) -> VL-LN + VL self-attention, state",
    slow=True, reduced=_REDUCED,
    notes="one 224x224 image (196 patches, 49 tokens) + 16 text token ids; local reduced checkpoint",
)
def groot_backbone():
    model = _model()
    return _Backbone(model), _backbone_inputs(model)


@register(
    "groot/action_step",
    "GR00T N1.7 one flow-matching step: action encoder + alternating VL cross/self-attention DiT + decoder",
    slow=True, reduced=_REDUCED, notes="backbone features given as inputs; the step loop stays outside",
)
def groot_action_step():
    model = _model()
    inputs = _backbone_inputs(model)
    with torch.no_grad():
        vl, state_features, image_mask, attn_mask = _Backbone(model)(*inputs)
    head = model.action_head
    actions = torch.randn(1, head.config.action_horizon, head.action_dim)
    timestep = torch.zeros(1, dtype=torch.long)
    return _Step(model), (actions, timestep, vl, state_features, image_mask, attn_mask, inputs[-1])
