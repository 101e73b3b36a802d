"""FastWAM (Wan2.2 MoT world-action model), reduced: the networks ``select_action`` runs per chunk.

``FastWAMPolicy.__init__`` (``_build_core_model``) loads the frozen Wan2.2 VAE
from a hard-coded hub id (``WAN22_DIFFUSERS_MODEL_ID``), the UMT5 text encoder
from ``text_encoder_model_id`` and the UMT5 tokenizer from
``tokenizer_model_id``, so the default policy cannot be built offline: the
``fastwam/model`` row keeps that blocker. The core network, ``FastWAM``, takes
those parts as constructor arguments; vkbench builds it the way
``_build_core_model`` does, with the three hub loads replaced by local,
random-weight modules built from configs written here: diffusers'
``AutoencoderKLWan`` (the Wan2.2 TI2V VAE geometry: patch 2, residual
down-blocks, 48 latent channels, 16x spatial compression; only the channel
width is smaller) in lerobot's ``WanVideoVAE38`` adapter, and a
``transformers.UMT5EncoderModel`` in lerobot's ``WanTextEncoder``. The tokenizer
stays outside (token ids are inputs), as in ``wall_x``. Float32 throughout (the
policy's default ``torch_dtype`` is bfloat16).

``select_action`` refills its queue from ``predict_action_chunk``, which runs
``FastWAM.infer_action`` (never ``infer_joint``: the video is not denoised at
inference, the video expert only runs once, on the clean first frame at t=0):

1. the UMT5 text encoder on the prompt (``encode_prompt``): ``fastwam/text_encoder``;
2. the VAE encoder on the first frame, the cameras concatenated along width
   (``_encode_input_image_latents_tensor``): ``fastwam/vae_encoder``;
3. proprioception token appended to the context, video-expert ``pre_dit`` and
   ``MoT.prefill_video_cache`` (per-layer video K/V): ``fastwam/video_prefill``;
4. ``num_inference_steps`` (10) times ``_predict_action_noise_with_cache`` (action
   expert over its tokens, attending to the cached video K/V): ``fastwam/action_step``.

The flow-matching update (``latents + pred * delta``) stays outside. The glue in
the wrappers is copied from ``infer_action`` / ``encode_prompt``; the layers and
the per-step method are lerobot's.

Three entries stop before Vulkan, each with a ``*_<change>`` rewrite entry:
``encode_prompt`` zeroes the padding with a slice starting at a data-dependent
length (export refuses it); the video blocks' RoPE (``rope_apply``) reads its
grid with ``grid_sizes.tolist()`` (data-dependent) and, like the action blocks'
``apply_dense_rope``, multiplies complex128 tensors, which ``to_edge`` rejects.
The rewrites zero the same positions with ``masked_fill`` and apply the same
rotation in real float64 arithmetic (bit-identical outputs on the example
inputs).
"""

from __future__ import annotations

from types import MethodType
from typing import Any

import torch
from torch import Tensor, nn

from vkbench.workloads.policies.offline_build import hub_entry
from vkbench.workloads.policies.registry import register

_TEXT_DIM = 64
_DOF, _PROPRIO = 7, 8
_CAMS = ("observation.images.top", "observation.images.wrist")

#: The video and action DiTs (``default_video_dit_config``/``default_action_dit_config`` with these
#: overrides). The action expert keeps its hidden width below its attention width (2 x 64), as the
#: released 1024 vs 24 x 128, so it still runs ``_FastWAMProjectedAttention``.
VIDEO_DIT = {"hidden_dim": 128, "ffn_dim": 256, "num_heads": 2, "attn_head_dim": 64, "num_layers": 2,
             "text_dim": _TEXT_DIM}
ACTION_DIT = {"hidden_dim": 64, "ffn_dim": 128, "num_heads": 2, "attn_head_dim": 64, "num_layers": 2,
              "text_dim": _TEXT_DIM}
#: Wan-AI/Wan2.2-TI2V-5B-Diffusers ``vae/config.json`` with base widths 160/256 -> 16; the standardization
#: statistics (48 released constants) become 0/1.
VAE = {
    "base_dim": 16, "decoder_base_dim": 16, "z_dim": 48, "dim_mult": [1, 2, 4, 4], "num_res_blocks": 2,
    "attn_scales": [], "temperal_downsample": [False, True, True], "dropout": 0.0, "in_channels": 12,
    "out_channels": 12, "is_residual": True, "patch_size": 2, "scale_factor_spatial": 16,
    "scale_factor_temporal": 4, "latents_mean": [0.0] * 48, "latents_std": [1.0] * 48,
}
#: google/umt5-xxl's encoder (24 layers x 4096, 64 heads x 64, gated-GELU FFN 10240, vocab 256384), narrowed.
UMT5 = {"vocab_size": 256, "d_model": _TEXT_DIM, "d_kv": 16, "d_ff": 128, "num_layers": 2, "num_heads": 4,
        "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 32,
        "relative_attention_max_distance": 128}

_REDUCED = (
    "video DiT 2 layers x 128, 2 heads x 64, ffn 256 (released: 30 x 3072, 24 heads x 128, ffn 14336); "
    "action DiT 2 layers x 64, attention 2 x 64, ffn 128 (released: 30 x 1024, 24 x 128, ffn 4096); "
    "text width 64 (4096); Wan2.2 VAE geometry kept, base width 16 (encoder 160, decoder 256); UMT5 encoder "
    "2 layers x 64, 4 heads x 16, vocab 256 (umt5-xxl: 24 x 4096, 64 heads, vocab 256k); float32 (bfloat16)"
)


def _dit_config(kind: str) -> dict[str, Any]:
    """lerobot's default ``video``/``action`` DiT config (7 DoF), reduced by VIDEO_DIT/ACTION_DIT."""
    from lerobot.policies.fastwam import configuration_fastwam as cfg

    if kind == "video":
        return {**cfg.default_video_dit_config(_DOF), **VIDEO_DIT}
    return {**cfg.default_action_dit_config(_DOF), **ACTION_DIT}


hub_entry("fastwam", "model", "FastWAM: Wan2.2 video DiT world-action model",
          images={"observation.images.top": (3, 224, 224), "observation.images.wrist": (3, 224, 224)},
          video_dit_config=lambda: _dit_config("video"), action_dit_config=lambda: _dit_config("action"),
          reduced=_REDUCED,
          notes="two 224x224 cameras (image widths must sum to 448); __init__ loads the Wan2.2 VAE from a "
          "hard-coded hub id (WAN22_DIFFUSERS_MODEL_ID), not configurable without a monkeypatch")


def config():
    """The policy config: two 224x224 cameras (224x448 concatenated), 7-DoF, proprio 8, reduced DiTs."""
    from lerobot.policies.fastwam.configuration_fastwam import FastWAMConfig

    from vkbench.workloads.policies._features import configure

    cfg = FastWAMConfig(
        device="cpu", torch_dtype="float32", action_dim=_DOF, proprio_dim=_PROPRIO, base_model_id=None,
        video_dit_config=_dit_config("video"), action_dit_config=_dit_config("action"),
    )
    height, width = cfg.image_size
    return configure(cfg, state=_PROPRIO, action=_DOF,
                     images={key: (3, height, width // len(_CAMS)) for key in _CAMS})


def vae() -> nn.Module:
    """``load_pretrained_wan_vae`` without the hub: the reduced ``AutoencoderKLWan`` in lerobot's adapter."""
    from diffusers import AutoencoderKLWan
    from lerobot.policies.fastwam.wan import WanVideoVAE38

    # eval(), as from_pretrained returns it: FastWAM holds the VAE unregistered, so policy.eval() misses it.
    return WanVideoVAE38(dtype=torch.float32, device="cpu", pretrained=AutoencoderKLWan(**VAE).eval())


def text_encoder() -> nn.Module:
    """``load_pretrained_wan_text_encoder`` without the hub: a reduced UMT5 encoder in lerobot's adapter."""
    from lerobot.policies.fastwam.wan.components import WanTextEncoder
    from transformers import UMT5Config, UMT5EncoderModel

    # eval() as from_pretrained returns it (UMT5 has dropout 0.1), for the same reason as the VAE.
    encoder = UMT5EncoderModel(UMT5Config(**UMT5)).eval()
    return WanTextEncoder(dtype=torch.float32, device="cpu", pretrained=encoder)


def core(cfg: Any = None, tokenizer: Any = None) -> nn.Module:
    """``FastWAMPolicy._build_core_model`` with the VAE, text encoder and tokenizer built locally."""
    from lerobot.policies.fastwam.wan import ActionDiT, FastWAM, MoT, WanVideoDiT

    cfg = cfg or config()
    video_expert = WanVideoDiT(**cfg.video_dit_config)
    action_expert = ActionDiT(**cfg.action_dit_config)
    mot = MoT(mixtures={"video": video_expert, "action": action_expert},
              mot_checkpoint_mixed_attn=cfg.mot_checkpoint_mixed_attn)
    return FastWAM(
        video_expert=video_expert, action_expert=action_expert, mot=mot, vae=vae(),
        text_encoder=text_encoder(), tokenizer=tokenizer, text_dim=int(cfg.video_dit_config["text_dim"]),
        proprio_dim=cfg.proprio_dim, device="cpu", torch_dtype=torch.float32,
        video_train_shift=float(cfg.video_scheduler["train_shift"]),
        video_infer_shift=float(cfg.video_scheduler["infer_shift"]),
        video_num_train_timesteps=int(cfg.video_scheduler["num_train_timesteps"]),
        action_train_shift=float(cfg.action_scheduler["train_shift"]),
        action_infer_shift=float(cfg.action_scheduler["infer_shift"]),
        action_num_train_timesteps=int(cfg.action_scheduler["num_train_timesteps"]),
    ).eval()


class TextEncoder(nn.Module):
    """``encode_prompt`` after the tokenizer: UMT5 encoder, embeddings past each prompt's length zeroed.

    ``encode_prompt`` then returns an all-True mask (cross-attention sees the fixed-length context), so
    the later entries take an all-True ``context_mask``.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.text_encoder = model.text_encoder

    def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
        prompt_emb = self.text_encoder(ids, mask)
        seq_lens = mask.gt(0).sum(dim=1).long()
        for i, v in enumerate(seq_lens):
            prompt_emb[i, v:] = 0
        return prompt_emb


class VaeEncoder(nn.Module):
    """``_encode_input_image_latents_tensor``: a [0, 1] image -> standardized Wan2.2 latents of one frame."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.vae = model.vae

    def forward(self, input_image: Tensor) -> Tensor:
        input_image = input_image * 2.0 - 1.0
        image = input_image[0].unsqueeze(1)
        return self.vae.encode([image])


class VideoPrefill(nn.Module):
    """``infer_action`` between the VAE and the denoising loop: proprio token appended to the context,
    video expert ``pre_dit`` at t=0, the MoT mask, ``prefill_video_cache`` -> per-layer video K/V (stacked)
    and the context the action steps use."""

    def __init__(self, model: nn.Module, action_horizon: int) -> None:
        super().__init__()
        self.model = model
        self.action_horizon = action_horizon

    def forward(self, first_frame_latents: Tensor, context: Tensor, context_mask: Tensor, proprio: Tensor):
        model = self.model
        context, context_mask = model._append_proprio_to_context(context, context_mask, proprio)  # noqa: SLF001
        timestep_video = torch.zeros((first_frame_latents.shape[0],), dtype=first_frame_latents.dtype,
                                     device=first_frame_latents.device)
        video_pre = model.video_expert.pre_dit(
            x=first_frame_latents, timestep=timestep_video, context=context, context_mask=context_mask,
            action=None, fuse_vae_embedding_in_latents=bool(model.video_expert.fuse_vae_embedding_in_latents),
        )
        video_seq_len = int(video_pre["tokens"].shape[1])
        attention_mask = model._build_mot_attention_mask(  # noqa: SLF001
            video_seq_len=video_seq_len, action_seq_len=self.action_horizon,
            video_tokens_per_frame=int(video_pre["meta"]["tokens_per_frame"]),
            device=video_pre["tokens"].device,
        )
        cache = model.mot.prefill_video_cache(
            video_tokens=video_pre["tokens"], video_freqs=self._video_freqs(video_pre, first_frame_latents),
            video_t_mod=video_pre["t_mod"],
            video_context_payload={"context": video_pre["context"], "mask": video_pre["context_mask"]},
            video_attention_mask=attention_mask[:video_seq_len, :video_seq_len],
        )
        keys = torch.stack([layer["k"] for layer in cache])
        values = torch.stack([layer["v"] for layer in cache])
        return keys, values, context, context_mask

    def _video_freqs(self, video_pre: dict[str, Any], latents: Tensor) -> Any:
        """The RoPE argument of the video blocks: ``pre_dit``'s ``{"grid_sizes", "freqs"}``."""
        return video_pre["freqs"]


class ActionStep(nn.Module):
    """``_predict_action_noise_with_cache``, one denoising step: action expert ``pre_dit``, its blocks
    attending to the cached first-frame video K/V (``forward_action_with_video_cache``), ``post_dit``."""

    def __init__(self, model: nn.Module, video_tokens_per_frame: int) -> None:
        super().__init__()
        self.model = model
        self.video_tokens_per_frame = video_tokens_per_frame

    def forward(self, latents_action: Tensor, timestep_action: Tensor, context: Tensor, context_mask: Tensor,
                keys: Tensor, values: Tensor) -> Tensor:
        model = self.model
        video_seq_len = int(keys.shape[2])
        attention_mask = model._build_mot_attention_mask(  # noqa: SLF001
            video_seq_len=video_seq_len, action_seq_len=latents_action.shape[1],
            video_tokens_per_frame=self.video_tokens_per_frame, device=latents_action.device,
        )
        cache = [{"k": k, "v": v} for k, v in zip(keys, values, strict=True)]
        return model._predict_action_noise_with_cache(  # noqa: SLF001
            latents_action=latents_action, timestep_action=timestep_action, context=context,
            context_mask=context_mask, video_kv_cache=cache, attention_mask=attention_mask,
            video_seq_len=video_seq_len,
        )


class TextEncoderMaskedZeroing(TextEncoder):
    """:class:`TextEncoder` zeroing the same positions with a mask (see the entry's notes)."""

    def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
        prompt_emb = self.text_encoder(ids, mask)
        seq_lens = mask.gt(0).sum(dim=1).long()
        past_end = torch.arange(prompt_emb.shape[1], device=prompt_emb.device)[None] >= seq_lens[:, None]
        return prompt_emb.masked_fill(past_end[..., None], 0)


def _real_freqs(freqs: Tensor) -> Tensor:
    """lerobot's complex128 RoPE table ``torch.polar(1, angles)`` as float64 ``(cos, sin)`` on a last axis
    of 2: exactly its real and imaginary parts (``view_as_real``), computed once outside the graph."""
    return torch.view_as_real(freqs).clone()


def _video_grid_freqs(freqs: Tensor, grid: tuple[int, int, int]) -> Tensor:
    """``rope_apply``'s per-token table for one video (``freqs_i``) from :func:`_real_freqs`'s table, the
    (frames, height, width) grid given as Python ints instead of read from ``grid_sizes`` with ``tolist``."""
    f, h, w = grid
    c = freqs.shape[1]
    parts = freqs.split([c - 2 * (c // 3), c // 3, c // 3], dim=1)
    table = torch.cat(
        [
            parts[0][:f].view(f, 1, 1, -1, 2).expand(f, h, w, -1, 2),
            parts[1][:h].view(1, h, 1, -1, 2).expand(f, h, w, -1, 2),
            parts[2][:w].view(1, 1, w, -1, 2).expand(f, h, w, -1, 2),
        ],
        dim=-2,
    )
    return table.reshape(f * h * w, 1, -1, 2)


def _rotate(x: Tensor, freqs: Tensor, num_heads: int) -> Tensor:
    """The RoPE product of ``rope_apply`` / ``apply_dense_rope`` in real float64 arithmetic: channels
    (2i, 2i+1) of each head are one complex number (``view_as_complex``) times ``cos + i sin``, written back
    interleaved (``view_as_real(...).flatten``); ``freqs`` is [seq, 1, pairs(, 2)], cast back to float32."""
    b, s = x.shape[:2]
    pairs = x.to(torch.float64).reshape(b, s, num_heads, -1, 2)
    freqs = freqs.reshape(s, 1, pairs.shape[3], 2)
    re, im = pairs[..., 0], pairs[..., 1]
    cos, sin = freqs[..., 0], freqs[..., 1]
    return torch.stack([re * cos - im * sin, re * sin + im * cos], dim=-1).flatten(2).to(torch.float32)


def _project_self_attention_real_rope(self: nn.Module, x: Tensor, freqs: Tensor) -> Tensor:
    """``FastWAMAttentionBlock.project_self_attention`` with the RoPE of :func:`_rotate`; ``freqs`` is the
    real table (video: :func:`_video_grid_freqs`, action: ``pre_dit``'s slice of :func:`_real_freqs`)."""
    q = self.self_attn.norm_q(self.self_attn.q(x))
    k = self.self_attn.norm_k(self.self_attn.k(x))
    v = self.self_attn.v(x)
    return _rotate(q, freqs, self.num_heads), _rotate(k, freqs, self.num_heads), v


def _use_real_rope(model: nn.Module) -> None:
    """Bind :func:`_project_self_attention_real_rope` on this model's blocks and give its action expert the
    real table, so a model built for the unchanged entries keeps lerobot's complex code."""
    for layer in model.mot.layers:
        for block in layer.blocks.values():
            block.project_self_attention = MethodType(_project_self_attention_real_rope, block)
    model.action_expert.freqs = _real_freqs(model.action_expert.freqs)


class VideoPrefillRealRope(VideoPrefill):
    """:class:`VideoPrefill` with real RoPE over a static grid (see the entry's notes)."""

    def __init__(self, model: nn.Module, action_horizon: int) -> None:
        super().__init__(model, action_horizon)
        _use_real_rope(model)
        self.real_freqs = _real_freqs(model.video_expert.freqs)

    def _video_freqs(self, video_pre: dict[str, Any], latents: Tensor) -> Any:
        patch = self.model.video_expert.patch_size
        grid = (latents.shape[2] // patch[0], latents.shape[3] // patch[1], latents.shape[4] // patch[2])
        return _video_grid_freqs(self.real_freqs, grid)


class ActionStepRealRope(ActionStep):
    """:class:`ActionStep` with real RoPE (see the entry's notes)."""

    def __init__(self, model: nn.Module, video_tokens_per_frame: int) -> None:
        super().__init__(model, video_tokens_per_frame)
        _use_real_rope(model)


def tokens_per_frame(cfg: Any) -> int:
    """Video tokens of one latent frame: 16x VAE compression, then the DiT's 2x2 patches."""
    height, width = cfg.image_size
    patch = cfg.video_dit_config["patch_size"]
    return (height // 16 // patch[1]) * (width // 16 // patch[2])


def _image(cfg: Any) -> Tensor:
    """The cameras side by side, as ``_input_image_from_batch`` gives them to ``infer_action``: [1,3,H,W]."""
    return torch.rand(1, 3, *cfg.image_size)


def _context(cfg: Any) -> tuple[Tensor, Tensor]:
    """A prompt's UMT5 embeddings (``tokenizer_max_len`` tokens) and ``encode_prompt``'s all-True mask."""
    length = cfg.tokenizer_max_len
    return torch.randn(1, length, _TEXT_DIM), torch.ones(1, length, dtype=torch.bool)


def text_inputs(cfg: Any, length: int = 20) -> tuple[Tensor, Tensor]:
    """What the UMT5 tokenizer returns for a ``length``-token prompt: ids and mask, right-padded to
    ``tokenizer_max_len`` (``padding="max_length"``)."""
    mask = torch.arange(cfg.tokenizer_max_len)[None] < length
    return torch.where(mask, torch.randint(1, UMT5["vocab_size"], mask.shape), 0), mask


def _text_encoder(kind: type[TextEncoder]) -> tuple[nn.Module, tuple[Tensor, ...]]:
    cfg = config()
    return kind(core(cfg)), text_inputs(cfg)


def _action_step(kind: type[ActionStep]) -> tuple[nn.Module, tuple[Tensor, ...]]:
    """The step and its inputs: the video K/V and context from the unchanged :class:`VideoPrefill`."""
    cfg = config()
    model = core(cfg)
    with torch.no_grad():
        prefill = VideoPrefill(model, cfg.action_horizon)
        keys, values, context, context_mask = prefill(*_prefill_inputs(model, cfg))
    timestep = torch.tensor([1000.0])  # the first step of the shifted schedule (sigma 1)
    return kind(model, tokens_per_frame(cfg)), (
        torch.randn(1, cfg.action_horizon, _DOF), timestep, context, context_mask, keys, values,
    )


def _prefill_inputs(model: nn.Module, cfg: Any) -> tuple[Tensor, ...]:
    with torch.no_grad():
        latents = VaeEncoder(model)(_image(cfg))
    return (latents, *_context(cfg), torch.randn(1, _PROPRIO))


@register(
    "fastwam/text_encoder",
    "FastWAM prompt encoder: UMT5 encoder over the token ids, padding positions zeroed (encode_prompt)",
    slow=True, reduced=_REDUCED,
    notes="tokenizer (google/umt5-xxl) outside: 128 token ids (tokenizer_max_len), 20 real then padding; "
    "FastWAM built from local configs (FastWAMPolicy.__init__ loads the VAE/UMT5/tokenizer from the hub)",
)
def fastwam_text_encoder():
    return _text_encoder(TextEncoder)


@register(
    "fastwam/vae_encoder",
    "FastWAM first-frame encoder: Wan2.2 VAE encoder (patchify, causal 3D convs, residual down-blocks) on "
    "the concatenated cameras -> standardized 48-channel latents",
    slow=True, reduced=_REDUCED,
    notes="one 224x448 frame (two 224x224 cameras side by side) -> [1, 48, 1, 14, 28]; AutoencoderKLWan "
    "built from the Wan2.2 TI2V config with narrower channels, random weights",
)
def fastwam_vae_encoder():
    cfg = config()
    return VaeEncoder(core(cfg)), (_image(cfg),)


@register(
    "fastwam/video_prefill",
    "FastWAM video prefill: proprio token appended to the text context, Wan video expert over the clean "
    "first-frame latents (t=0), per-layer K/V for the action steps",
    slow=True, reduced=_REDUCED,
    notes="98 video tokens (14x28 latents, 2x2 patches), 129 context tokens (128 text + proprio); runs once "
    "per chunk, outputs the stacked video K/V and the context",
)
def fastwam_video_prefill():
    cfg = config()
    model = core(cfg)
    return VideoPrefill(model, cfg.action_horizon), _prefill_inputs(model, cfg)


@register(
    "fastwam/action_step",
    "FastWAM one action denoising step: action expert (32 tokens) with mixed attention over the cached "
    "first-frame video K/V, text cross-attention, velocity head",
    slow=True, reduced=_REDUCED,
    notes="num_inference_steps (10) per chunk; video K/V and context from fastwam/video_prefill as inputs; "
    "the flow-matching update stays outside",
)
def fastwam_action_step():
    return _action_step(ActionStep)


@register(
    "fastwam/text_encoder_masked_zeroing",
    "FastWAM prompt encoder, rewritten to export: fastwam/text_encoder zeroing the padding with a mask",
    slow=True, reduced=_REDUCED,
    notes="rewrite: encode_prompt's `for i, v in enumerate(seq_lens): prompt_emb[i, v:] = 0` (a slice "
    "starting at a data-dependent length) becomes `masked_fill` of the positions `arange(L) >= "
    "seq_lens[:, None]`, the same positions; nothing else differs from fastwam/text_encoder",
)
def fastwam_text_encoder_masked_zeroing():
    return _text_encoder(TextEncoderMaskedZeroing)


@register(
    "fastwam/video_prefill_real_rope",
    "FastWAM video prefill, rewritten to export: fastwam/video_prefill with RoPE in real arithmetic over a "
    "static grid",
    slow=True, reduced=_REDUCED,
    notes="rewrite: (1) the video blocks' 3-axis RoPE reads the (frames, height, width) grid from the "
    "latents' shape instead of `grid_sizes.tolist()` (data-dependent); (2) the complex128 product "
    "(`view_as_complex` x the `torch.polar` table) becomes float64 cos/sin products on the table's real and "
    "imaginary parts; the action expert's blocks are patched too but do not run here; nothing else differs",
)
def fastwam_video_prefill_real_rope():
    cfg = config()
    model = core(cfg)
    inputs = _prefill_inputs(model, cfg)
    return VideoPrefillRealRope(model, cfg.action_horizon), inputs


@register(
    "fastwam/action_step_real_rope",
    "FastWAM action denoising step, rewritten to lower: fastwam/action_step with RoPE in real arithmetic",
    slow=True, reduced=_REDUCED,
    notes="rewrite: the action blocks' RoPE product (`view_as_complex` x the complex128 `torch.polar` table, "
    "which to_edge rejects) becomes float64 cos/sin products on the table's real and imaginary parts; "
    "inputs (video K/V, context) from the unchanged fastwam/video_prefill; nothing else differs",
)
def fastwam_action_step_real_rope():
    return _action_step(ActionStepRealRope)
