"""FastWAM's reduced entries: they reproduce the policy's own inference, and the rewrites change nothing."""

from __future__ import annotations

import pytest
import torch

from vkbench.workloads.policies import ENTRIES

_PARTS = ("text_encoder", "vae_encoder", "video_prefill", "action_step")
_REWRITES = {
    "text_encoder": "text_encoder_masked_zeroing",
    "video_prefill": "video_prefill_real_rope",
    "action_step": "action_step_real_rope",
}


def test_fastwam_has_one_entry_per_network_and_keeps_the_default_config_row():
    """Each per-chunk network is an entry; each rewrite says what changed; the blocked default row stays."""
    names = {name for name in ENTRIES if name.startswith("fastwam/")}
    expected = {"fastwam/model", *(f"fastwam/{name}" for name in (*_PARTS, *_REWRITES.values()))}
    assert names == expected
    assert "WAN22_DIFFUSERS_MODEL_ID" in ENTRIES["fastwam/model"].notes
    for part, rewrite in _REWRITES.items():
        entry = ENTRIES[f"fastwam/{rewrite}"]
        assert entry.notes.startswith("rewrite: ") and entry.slow and entry.reduced
        assert f"fastwam/{part}" in entry.description


@pytest.mark.parametrize("part", list(_REWRITES))
def test_fastwam_rewrite_computes_what_the_unchanged_entry_computes(part):
    """Same inputs, same outputs; the unchanged entry keeps lerobot's complex RoPE / slicing code."""
    from lerobot.policies.fastwam.wan.video_dit import FastWAMAttentionBlock

    module, inputs = ENTRIES[f"fastwam/{part}"].build()
    rewrite, same_inputs = ENTRIES[f"fastwam/{_REWRITES[part]}"].build()
    assert all(torch.equal(a, b) for a, b in zip(inputs, same_inputs, strict=True))
    blocks = [m for m in module.modules() if isinstance(m, FastWAMAttentionBlock)]
    assert all("project_self_attention" not in vars(block) for block in blocks)
    with torch.no_grad():
        expected, actual = module(*inputs), rewrite(*same_inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    for want, got in zip(expected, actual, strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-6)


def test_fastwam_wrappers_are_one_step_of_predict_action_chunk(monkeypatch):
    """text encoder + VAE encoder + video prefill + one action step + the flow update reproduce
    ``FastWAMPolicy.predict_action_chunk`` with one inference step (the policy built with its three hub
    loads replaced by vkbench's local modules, a stub tokenizer, the same weights)."""
    from lerobot.policies.fastwam import modeling_fastwam
    from lerobot.utils.constants import OBS_STATE

    from vkbench.workloads.policies import fastwam

    cfg = fastwam.config()
    ids, mask = fastwam.text_inputs(cfg)
    prompts = []

    def tokenizer(prompt, return_mask=False, add_special_tokens=True):
        prompts.append(prompt)
        return ids, mask.long()

    loads = {"load_pretrained_wan_vae": fastwam.vae, "load_pretrained_wan_text_encoder": fastwam.text_encoder,
             "build_wan_tokenizer": lambda: tokenizer}
    for name, build in loads.items():
        monkeypatch.setattr(modeling_fastwam, name, lambda build=build, **_: build())
    policy = modeling_fastwam.FastWAMPolicy(cfg).eval()
    top, wrist = torch.rand(1, 3, 224, 224), torch.rand(1, 3, 224, 224)
    state = torch.randn(1, 8)
    batch = {"observation.images.top": top, "observation.images.wrist": wrist, OBS_STATE: state,
             "task": "pick up the cube", "num_inference_steps": 1}
    expected = policy.predict_action_chunk(batch)
    assert prompts == [cfg.prompt_template.format(task="pick up the cube")]

    model = policy.model
    with torch.no_grad():
        context = fastwam.TextEncoder(model)(ids, mask)
        latents = fastwam.VaeEncoder(model)(torch.cat([top, wrist], dim=-1))
        keys, values, context, context_mask = fastwam.VideoPrefill(model, cfg.action_horizon)(
            latents, context, torch.ones_like(mask), state)
        noise = torch.randn((1, cfg.action_horizon, cfg.action_dim),
                            generator=torch.Generator("cpu").manual_seed(cfg.inference_seed))
        timesteps, deltas = model.infer_action_scheduler.build_inference_schedule(
            num_inference_steps=1, device=torch.device("cpu"), dtype=torch.float32)
        step = fastwam.ActionStep(model, fastwam.tokens_per_frame(cfg))
        velocity = step(noise, timesteps[:1], context, context_mask, keys, values)
    torch.testing.assert_close(noise + velocity * deltas[0], expected)
