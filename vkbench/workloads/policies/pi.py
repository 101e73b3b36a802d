"""pi0 and pi05, reduced: PaliGemma prefix (SigLIP + Gemma -> K/V) and one action-expert step.

The released models (PaliGemma 2B + Gemma 300M expert, SigLIP so400m) are
~3.5B parameters; here both Gemmas have 2 layers, width 256/128 (8 heads x 32,
1 KV head, vocab 257152 kept), SigLIP has 2 layers of width 256. Every op kind
of the full model is kept (same modules, fewer/narrower layers). The
timestep embedding stays as lerobot computes it (float64 on CPU).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_REDUCED = (
    "PaliGemma: Gemma 2 layers x width 256 (full 18 x 2048), expert 2 x 128 (full 18 x 1024), "
    "8 heads x 32 (full 8 x 256), SigLIP 2 layers x 256 (full 27 x 1152); vocab and 224x224 input kept"
)
_LANG = 48  # tokenizer_max_length of pi0


@contextlib.contextmanager
def _reduced(modeling: Any) -> Iterator[None]:
    """Patch ``modeling`` (pi0's or pi05's module) to build the reduced backbones."""
    gemma = modeling.GemmaConfig
    sizes = {
        "gemma_2b": gemma(width=256, depth=2, mlp_dim=1024, num_heads=8, num_kv_heads=1, head_dim=32),
        "gemma_300m": gemma(width=128, depth=2, mlp_dim=512, num_heads=8, num_kv_heads=1, head_dim=32),
    }
    original_config = modeling.get_gemma_config
    original_vlm = modeling.PaliGemmaForConditionalGenerationWithPiGemma

    def small_vlm(config):
        vision = config.vision_config
        vision.hidden_size, vision.intermediate_size = 256, 1024
        vision.num_hidden_layers, vision.num_attention_heads = 2, 4
        vision.projection_dim = config.text_config.hidden_size
        config.projection_dim = config.text_config.hidden_size
        return original_vlm(config=config)

    modeling.get_gemma_config = sizes.__getitem__
    modeling.PaliGemmaForConditionalGenerationWithPiGemma = small_vlm
    try:
        yield
    finally:
        modeling.get_gemma_config = original_config
        modeling.PaliGemmaForConditionalGenerationWithPiGemma = original_vlm


def _policy(kind: str):
    if kind == "pi0":
        from lerobot.policies.pi0 import modeling_pi0 as modeling
        from lerobot.policies.pi0.configuration_pi0 import PI0Config as Config
        policy_cls = modeling.PI0Policy
    else:
        from lerobot.policies.pi05 import modeling_pi05 as modeling
        from lerobot.policies.pi05.configuration_pi05 import PI05Config as Config
        policy_cls = modeling.PI05Policy
    config = Config(device="cpu", dtype="float32")
    configure(config, state=config.max_state_dim, action=config.max_action_dim,
              images={"observation.images.base_0_rgb": (3, *config.image_resolution)})
    with _reduced(modeling):
        policy = policy_cls(config)
    return policy.model, config


def _eager(model: nn.Module) -> None:
    pwe = model.paligemma_with_expert
    pwe.paligemma.model.language_model.config._attn_implementation = "eager"  # noqa: SLF001
    pwe.gemma_expert.model.config._attn_implementation = "eager"  # noqa: SLF001


class _Prefix(nn.Module):
    """``sample_actions`` up to the prefix K/V cache: SigLIP + Gemma over image and language."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image: Tensor, img_mask: Tensor, lang_tokens: Tensor, lang_masks: Tensor):
        from lerobot.policies.common.vla_utils import make_att_2d_masks, prepare_attention_masks_4d

        embs, pad_masks, att_masks = self.model.embed_prefix([image], [img_mask], lang_tokens, lang_masks)
        att_2d = make_att_2d_masks(pad_masks, att_masks)
        position_ids = torch.cumsum(pad_masks, dim=1) - 1
        _eager(self.model)
        _, cache = self.model.paligemma_with_expert.forward(
            attention_mask=prepare_attention_masks_4d(att_2d), position_ids=position_ids,
            past_key_values=None, inputs_embeds=[embs, None], use_cache=True,
        )
        flat: list[Tensor] = [pad_masks]
        for keys, values, *_ in cache:
            flat += [keys, values]
        return tuple(flat)


class _DenoiseStep(nn.Module):
    """``denoise_step``: the action expert over the suffix, attending to the prefix K/V."""

    def __init__(self, model: nn.Module, with_state: bool) -> None:
        super().__init__()
        self.model = model
        self.with_state = with_state

    def forward(self, state: Tensor, prefix_pad_masks: Tensor, x_t: Tensor, timestep: Tensor, *kv: Tensor):
        from transformers import DynamicCache

        _eager(self.model)
        cache = DynamicCache(tuple((kv[i], kv[i + 1], None) for i in range(0, len(kv), 2)))
        if self.with_state:
            return self.model.denoise_step(state, prefix_pad_masks, cache, x_t, timestep)
        return self.model.denoise_step(prefix_pad_masks, cache, x_t, timestep)


def _prefix_inputs(config) -> tuple[Tensor, ...]:
    h, w = config.image_resolution
    lang = torch.randint(0, 1000, (1, _LANG))
    return (torch.rand(1, 3, h, w) * 2 - 1, torch.ones(1, dtype=torch.bool), lang,
            torch.ones(1, _LANG, dtype=torch.bool))


def _build_prefix(kind: str):
    model, config = _policy(kind)
    return _Prefix(model), _prefix_inputs(config)


def _build_denoise(kind: str):
    model, config = _policy(kind)
    with torch.no_grad():
        pad_masks, *kv = _Prefix(model).eval()(*_prefix_inputs(config))
    state = torch.randn(1, config.max_state_dim)
    x_t = torch.randn(1, config.chunk_size, config.max_action_dim)
    timestep = torch.tensor([0.5])
    return _DenoiseStep(model, with_state=kind == "pi0"), (state, pad_masks, x_t, timestep, *kv)


for _kind, _label in (("pi0", "pi0"), ("pi05", "pi0.5")):
    register(
        f"{_kind}/prefix",
        f"{_label} prefix: SigLIP image + Gemma over image and language tokens -> K/V cache",
        slow=True, reduced=_REDUCED, notes="one 224x224 camera, 48 language tokens",
    )(lambda kind=_kind: _build_prefix(kind))
    register(
        f"{_kind}/denoise_step",
        f"{_label} one flow-matching step: action expert over state/noisy actions + prefix K/V",
        slow=True, reduced=_REDUCED,
        notes="timestep embedding computed in float64 as lerobot does; K/V given as inputs",
    )(lambda kind=_kind: _build_denoise(kind))


# ------------------------------------------------------------------ pi0_fast
class _FastPrefix(nn.Module):
    """``sample_actions_fast_kv_cache`` up to the first token: prefix (+BOS) through PaliGemma -> logits, K/V.

    ``PI0FastPolicy.__init__`` loads the FAST and PaliGemma tokenizers from the
    hub (the FAST one with remote code); the network itself is
    ``PI0FastPytorch``, built here directly from the config with no tokenizer:
    the language token ids (BOS appended) are inputs.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image: Tensor, img_mask: Tensor, tokens: Tensor, masks: Tensor):
        from lerobot.policies.common.vla_utils import prepare_attention_masks_4d

        pwe = self.model.paligemma_with_expert
        embs, pad_masks, att_masks, _, _ = self.model.embed_prefix_fast([image], [img_mask], tokens, masks)
        position_ids = torch.cumsum(pad_masks, dim=1) - 1
        pwe.paligemma.model.language_model.config._attn_implementation = "eager"  # noqa: SLF001
        (out, _), cache = pwe.forward(
            attention_mask=prepare_attention_masks_4d(att_masks, dtype=embs.dtype), position_ids=position_ids,
            past_key_values=None, inputs_embeds=[embs, None], use_cache=True, adarms_cond=[None, None],
        )
        flat: list[Tensor] = [pwe.paligemma.lm_head(out[:, -1:, :]), pad_masks]
        for keys, values, *_ in cache:
            flat += [keys, values]
        return tuple(flat)


@register(
    "pi0_fast/prefix",
    "PI0-FAST prefix: SigLIP + Gemma over image and language (+BOS) -> first-token logits and K/V cache",
    slow=True, reduced=_REDUCED.replace(", expert 2 x 128 (full 18 x 1024)", ""),
    notes="PI0FastPytorch built without the policy (its __init__ loads the FAST/PaliGemma tokenizers from "
    "the hub); 48 token ids + BOS; the autoregressive decode loop stays outside",
)
def pi0_fast_prefix():
    from lerobot.policies.pi0_fast import modeling_pi0_fast as modeling
    from lerobot.policies.pi0_fast.configuration_pi0_fast import PI0FastConfig

    config = PI0FastConfig(device="cpu", dtype="float32")
    configure(config, state=32, action=32,
              images={"observation.images.base_0_rgb": (3, *config.image_resolution)})
    with _reduced(modeling):
        model = modeling.PI0FastPytorch(config)
    image, img_mask, lang, lang_masks = _prefix_inputs(config)
    tokens = torch.cat([lang, torch.full((1, 1), 2)], dim=1)  # 2: PaliGemma's BOS id
    return _FastPrefix(model), (image, img_mask, tokens, torch.cat([lang_masks, lang_masks[:, :1]], dim=1))
