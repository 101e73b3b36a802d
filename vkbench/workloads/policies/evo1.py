"""Evo-1, reduced: InternVL3 embedder (vision + Qwen2 prefix) and one flow-matching action-head step.

``InternVL3Embedder`` loads ``AutoTokenizer/AutoModel.from_pretrained(vlm_model_name)``;
that name may be a directory, so vkbench saves a reduced random-weight
``InternVLModel`` and a word-level tokenizer holding InternVL's image tokens
into a local folder and passes its path (no hub call, no monkeypatch). The
tokenizer runs outside the exported network: token ids are inputs.
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
    "InternVL3: InternViT 2 layers x 128 (full 24 x 1024), Qwen2 2 layers x 256, 4 heads, 2 KV heads "
    "(Evo-1 uses 14 of 24 layers x 896); action head embed 256 (tracks the LM width; full 896), other "
    "head sizes default; 448x448 input, 256 image tokens, vocab 151674 kept"
)
_SPECIAL = ["<unk>", "<img>", "</img>", "<IMG_CONTEXT>"]
_TEXT = 16


@cache
def internvl_dir() -> str:
    """A local folder with a reduced random-weight InternVL3 and a tokenizer (written once per process)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import InternVLConfig, InternVLModel, PreTrainedTokenizerFast

    folder = Path(tempfile.mkdtemp(prefix="vkbench-internvl-"))
    word_level = Tokenizer(models.WordLevel({t: i for i, t in enumerate(_SPECIAL)}, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(
        tokenizer_object=word_level, unk_token="<unk>", pad_token="<unk>"
    ).save_pretrained(folder)
    config = InternVLConfig(
        vision_config={
            "hidden_size": 128,
            "intermediate_size": 256,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": [448, 448],
            "patch_size": [14, 14],
        },
        text_config={
            "model_type": "qwen2",
            "hidden_size": 256,
            "intermediate_size": 512,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "vocab_size": 151674,
        },
        image_token_id=_SPECIAL.index("<IMG_CONTEXT>"),
        image_seq_length=256,
    )
    torch.manual_seed(0)
    InternVLModel(config).save_pretrained(folder)
    return str(folder)


def _model():
    from lerobot.policies.evo1.configuration_evo1 import Evo1Config
    from lerobot.policies.evo1.modeling_evo1 import Evo1Policy

    config = Evo1Config(
        device="cpu",
        vlm_model_name=internvl_dir(),
        vlm_dtype="float32",
        use_flash_attn=False,
        embed_dim=256,
        enable_gradient_checkpointing=False,
    )
    configure(
        config,
        state=config.max_state_dim,
        action=config.max_action_dim,
        images={"observation.images.top": (3, *config.image_resolution)},
    )
    policy = Evo1Policy(config)
    return policy.model.float().eval(), config


class _Embedder(nn.Module):
    """``_forward_vlm`` after tokenization: InternVL3 over image tiles and prompt -> last hidden states."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.vlm = model.embedder.model

    def forward(self, input_ids: Tensor, pixel_values: Tensor, attention_mask: Tensor) -> Tensor:
        out = self.vlm(
            input_ids=input_ids,
            pixel_values=pixel_values,
            attention_mask=attention_mask,
            output_hidden_states=True,
            return_dict=True,
        )
        return out.hidden_states[-1].to(torch.float32)


class _Step(nn.Module):
    """One iteration of the action head's ``get_action`` (context prep, velocity, Euler update)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.head = model.action_head

    def forward(
        self, fused_tokens: Tensor, context_mask: Tensor, state: Tensor, action_seq: Tensor, time_emb: Tensor
    ) -> Tensor:
        head = self.head
        context, key_padding_mask, embodiment_id = head._prepare_context(  # noqa: SLF001
            fused_tokens, state, None, context_mask
        )
        batch = fused_tokens.shape[0]
        x = head._project_actions(action_seq, embodiment_id)  # noqa: SLF001
        for block in head.transformer_blocks:
            x = block(x, context, time_emb, key_padding_mask)
        x = head.norm_out(x)
        pooled = head.seq_pool_proj(x.reshape(batch, -1)) if head.horizon > 1 else x.squeeze(1)
        velocity = head.mlp_head(pooled, embodiment_id).view(batch, head.horizon, head.per_action_dim)
        return action_seq + (1.0 / int(head.num_inference_timesteps)) * velocity


def _embedder_inputs(model) -> tuple[Tensor, ...]:
    image = [1, *[3] * model.embedder.num_image_token, 2]
    ids = torch.tensor([*[0] * (_TEXT // 2), *image, *[0] * (_TEXT // 2)])[None]
    return ids, torch.rand(1, 3, 448, 448), torch.ones_like(ids)


@register(
    "evo1/embedder",
    "Evo-1 embedder: InternViT + pixel-shuffle MLP projector + Qwen2 over image tokens and prompt",
    slow=True,
    reduced=_REDUCED,
    notes="one 448x448 tile (256 tokens) + 16 token ids; local InternVL3 folder",
)
def evo1_embedder():
    model, _ = _model()
    return _Embedder(model), _embedder_inputs(model)


@register(
    "evo1/action_step",
    "Evo-1 one flow-matching step: state encoder, cross-attention action transformer, pooled MLP head",
    slow=True,
    reduced=_REDUCED,
    notes="fused VL tokens given as inputs; time embedding lookup outside",
)
def evo1_action_step():
    model, config = _model()
    inputs = _embedder_inputs(model)
    with torch.no_grad():
        fused = _Embedder(model)(*inputs)
    head = model.action_head
    time_emb = head.time_pos_enc(1000)[:, 0, :].squeeze(0)[None].float()
    action = torch.rand(1, config.chunk_size, config.max_action_dim) * 2 - 1
    return _Step(model), (fused, inputs[2].bool(), torch.randn(1, config.max_state_dim), action, time_emb)
