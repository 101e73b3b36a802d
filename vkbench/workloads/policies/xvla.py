"""X-VLA, reduced: Florence-2 prefix (DaViT + BART encoder) and one soft-prompted transformer step.

X-VLA's Florence-2 config normally comes from the hub checkpoint; here it is
given in code (``florence_config`` with a reduced DaViT vision tower and BART
text config, in the native ``transformers`` format), so nothing is downloaded.
The language tokens are fed as ids (the BART tokenizer stays outside).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_REDUCED = (
    "Florence-2: DaViT 4 stages x 1 block, widths 32/64/128/256 (full base: 1/1/9/1 blocks, 128..1024), "
    "BART encoder 2 layers x 256 (full 6 x 768), projection 256; policy transformer 2 layers x 256, 4 heads "
    "(full 24 x 1024, 16 heads); 224x224 views (released 224 after padding), vocab 51289 kept"
)
_LANG = 64  # tokenizer_max_length
_CAMS = ["observation.images.top", "observation.images.wrist"]

FLORENCE = {
    "vision_config": {
        "depths": [1, 1, 1, 1], "embed_dim": [32, 64, 128, 256], "num_heads": [1, 2, 4, 8],
        "num_groups": [1, 2, 4, 8], "window_size": 7, "projection_dim": 256,
        "max_position_embeddings": 50, "max_temporal_embeddings": 100, "drop_path_rate": 0.0,
    },
    "text_config": {
        "model_type": "bart", "vocab_size": 51289, "d_model": 256, "encoder_layers": 2, "decoder_layers": 1,
        "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 1024,
        "decoder_ffn_dim": 1024, "max_position_embeddings": 1024,
    },
}


def _policy():
    from lerobot.policies.xvla.configuration_xvla import XVLAConfig
    from lerobot.policies.xvla.modeling_xvla import XVLAPolicy

    config = XVLAConfig(device="cpu", dtype="float32", florence_config=FLORENCE, hidden_size=256, depth=2,
                        num_heads=4)
    configure(config, state=8, action=20, images={key: (3, 224, 224) for key in _CAMS})
    return XVLAPolicy(config).model, config


class _Prefix(nn.Module):
    """``forward_vlm`` with every view valid: DaViT features per view, BART encoder over view 0 + text.

    X-VLA's own ``forward_vlm`` selects the valid views with ``int(mask.sum())``
    (data-dependent); with all views present that selection is the identity.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Tensor, pixel_values: Tensor):
        vlm = self.model.vlm
        batch, views = pixel_values.shape[:2]
        feats = vlm.get_image_features(pixel_values.flatten(0, 1)).pooler_output
        feats = feats.view(batch, views, *feats.shape[1:])
        merged = torch.cat([feats[:, 0], vlm.get_input_embeddings()(input_ids)], dim=1)
        mask = torch.ones(merged.shape[:2], dtype=torch.long, device=merged.device)
        enc = vlm.language_model.encoder(attention_mask=mask, inputs_embeds=merged)[0]
        return enc, feats[:, 1:].reshape(batch, -1, feats.shape[-1])


class _DenoiseStep(nn.Module):
    """One iteration of ``generate_actions``: mix, action-space preprocess, soft-prompted transformer."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, vlm_features: Tensor, aux_visual_inputs: Tensor, domain_id: Tensor, proprio: Tensor,
                x1: Tensor, action: Tensor, t: Tensor) -> Tensor:
        x_t = x1 * t.view(-1, 1, 1) + action * (1 - t).view(-1, 1, 1)
        proprio_m, x_t_m = self.model.action_space.preprocess(proprio, x_t)
        return self.model.transformer(domain_id=domain_id, action_with_noise=x_t_m, proprio=proprio_m, t=t,
                                      vlm_features=vlm_features, aux_visual_inputs=aux_visual_inputs)


def _prefix_inputs() -> tuple[Tensor, ...]:
    return torch.randint(0, 1000, (1, _LANG)), torch.rand(1, len(_CAMS), 3, 224, 224)


@register(
    "xvla/prefix",
    "X-VLA prefix: Florence-2 DaViT over every view + BART encoder over view 0 and language",
    slow=True, reduced=_REDUCED,
    notes="two 224x224 views, 64 token ids (tokenizer outside); local Florence-2 config, all views valid",
)
def xvla_prefix():
    model, _ = _policy()
    return _Prefix(model), _prefix_inputs()


@register(
    "xvla/denoise_step",
    "X-VLA one denoising iteration: soft-prompted transformer over noisy actions, proprio, VLM features",
    slow=True, reduced=_REDUCED, notes="ee6d action space; the step loop and postprocess stay outside",
)
def xvla_denoise_step():
    model, config = _policy()
    with torch.no_grad():
        enc, aux = _Prefix(model).eval()(*_prefix_inputs())
    dim = model.dim_action
    return _DenoiseStep(model), (
        enc, aux, torch.zeros(1, dtype=torch.long), torch.randn(1, model.dim_proprio),
        torch.randn(1, config.chunk_size, dim), torch.zeros(1, config.chunk_size, dim), torch.full((1,), 0.5),
    )
