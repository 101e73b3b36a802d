"""SmolVLA, reduced: SmolVLM prefix (SigLIP + connector + Llama -> K/V) and one action-expert step.

SmolVLA's ``__init__`` reads the SmolVLM2 config and processor with
``from_pretrained(vlm_model_name)``; ``vlm_model_name`` may be a directory,
so vkbench writes a reduced SmolVLM config and a processor (a word-level
tokenizer holding SmolVLM's image special tokens) into a local folder and
passes its path. No hub call, no monkeypatch; the language tokens are fed as
ids (the tokenizer stays outside the exported network).
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
    "SmolVLM: Llama 4 layers x width 256, 4 heads x 64, 2 KV heads (SmolVLA uses 16 of 32 layers x 960, "
    "15 heads x 64, 5 KV heads); expert 4 layers x 192 (0.75 width kept); SigLIP 2 layers x 128 "
    "(full 12 x 768); 512x512 input, patch 16, pixel-shuffle x4 connector, vocab 49280 kept"
)
_LANG = 48  # tokenizer_max_length of SmolVLA
_LAYERS = 4  # >= 2 so both self-attention and cross-attention expert layers are exported
_SPECIAL = {
    "fake_image_token": "<fake_token_around_image>",
    "global_image_token": "<global-img>",
    "image_token": "<image>",
    "end_of_utterance_token": "<end_of_utterance>",
}


@cache
def smolvlm_dir() -> str:
    """A local folder with a reduced SmolVLM config and processor (written once per process)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        SmolVLMConfig,
        SmolVLMImageProcessor,
        SmolVLMProcessor,
        SmolVLMVideoProcessor,
    )

    folder = Path(tempfile.mkdtemp(prefix="vkbench-smolvlm-"))
    tokens = ["<unk>", "<|im_start|>", *_SPECIAL.values(), "<row_1_col_1>"]
    word_level = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=word_level, unk_token="<unk>", bos_token="<|im_start|>",
        eos_token="<end_of_utterance>", extra_special_tokens=dict(_SPECIAL),
    )
    config = SmolVLMConfig(
        text_config={
            "model_type": "llama", "hidden_size": 256, "intermediate_size": 1024,
            "num_hidden_layers": _LAYERS, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 64, "vocab_size": 49280,
        },
        vision_config={
            "hidden_size": 128, "intermediate_size": 512, "num_hidden_layers": 2,
            "num_attention_heads": 2, "image_size": 512, "patch_size": 16,
        },
        scale_factor=4,
        image_token_id=tokens.index("<image>"),
    )
    config.save_pretrained(folder)
    SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(), tokenizer=tokenizer,
        video_processor=SmolVLMVideoProcessor(), image_seq_len=64,
    ).save_pretrained(folder)
    return str(folder)


def _policy():
    from lerobot.policies.smolvla.configuration_smolvla import SmolVLAConfig
    from lerobot.policies.smolvla.modeling_smolvla import SmolVLAPolicy

    config = SmolVLAConfig(device="cpu", vlm_model_name=smolvlm_dir(), load_vlm_weights=False,
                           num_vlm_layers=_LAYERS)
    configure(config, state=config.max_state_dim, action=config.max_action_dim,
              images={"observation.images.top": (3, *config.resize_imgs_with_padding)})
    return SmolVLAPolicy(config).model, config


class _Prefix(nn.Module):
    """``sample_actions`` up to the prefix K/V cache: image, language and state through SmolVLM."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image: Tensor, img_mask: Tensor, lang_tokens: Tensor, lang_masks: Tensor,
                state: Tensor):
        from lerobot.policies.common.vla_utils import make_att_2d_masks

        embs, pad_masks, att_masks = self.model.embed_prefix([image], [img_mask], lang_tokens, lang_masks,
                                                             state=state)
        att_2d = make_att_2d_masks(pad_masks, att_masks)
        position_ids = torch.cumsum(pad_masks, dim=1) - 1
        _, cache_ = self.model.vlm_with_expert.forward(
            attention_mask=att_2d, position_ids=position_ids, past_key_values=None,
            inputs_embeds=[embs, None], use_cache=True,
        )
        flat: list[Tensor] = [pad_masks]
        for keys, values, *_ in cache_:
            flat += [keys, values]
        return tuple(flat)


class _DenoiseStep(nn.Module):
    """``denoise_step``: the action expert (self- and cross-attention layers) over the noisy chunk."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, prefix_pad_masks: Tensor, x_t: Tensor, timestep: Tensor, *kv: Tensor):
        from transformers import DynamicCache

        cache_ = DynamicCache(tuple((kv[i], kv[i + 1]) for i in range(0, len(kv), 2)))
        return self.model.denoise_step(prefix_pad_masks, cache_, x_t, timestep)


def _prefix_inputs(config) -> tuple[Tensor, ...]:
    h, w = config.resize_imgs_with_padding
    return (torch.rand(1, 3, h, w) * 2 - 1, torch.ones(1, dtype=torch.bool),
            torch.randint(0, 1000, (1, _LANG)), torch.ones(1, _LANG, dtype=torch.bool),
            torch.randn(1, config.max_state_dim))


@register(
    "smolvla/prefix",
    "SmolVLA prefix: SigLIP + pixel-shuffle connector + SmolVLM Llama over image, language, state -> K/V",
    slow=True, reduced=_REDUCED,
    notes="one 512x512 camera, 48 language token ids (tokenizer outside); local reduced SmolVLM config",
)
def smolvla_prefix():
    model, config = _policy()
    return _Prefix(model), _prefix_inputs(config)


@register(
    "smolvla/denoise_step",
    "SmolVLA one flow-matching step: action expert (interleaved self/cross attention) + prefix K/V",
    slow=True, reduced=_REDUCED, notes="K/V given as inputs; the Euler loop stays outside",
)
def smolvla_denoise_step():
    model, config = _policy()
    with torch.no_grad():
        pad_masks, *kv = _Prefix(model).eval()(*_prefix_inputs(config))
    x_t = torch.randn(1, config.chunk_size, config.max_action_dim)
    return _DenoiseStep(model), (pad_masks, x_t, torch.tensor([0.5]), *kv)
