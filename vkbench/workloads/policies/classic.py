"""Entries of the small, classic policies: ACT, Diffusion, TDMPC, VQ-BeT, SAC actor.

Shapes follow each policy's reference setup in LeRobot (ACT: ALOHA sim, one
480x640 camera, 14-dim state/action; Diffusion and VQ-BeT: PushT, 96x96 image,
2-dim state/action; TDMPC: xArm, 84x84 image, 4-dim state/action; SAC: the
gaussian actor's default dataset stats, 2-dim state, 3-dim action, 128x128).
Backbones are built with ``pretrained_backbone_weights=None`` (random).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from vkbench.workloads.policies._features import configure
from vkbench.workloads.policies.registry import register

_OBS_IMAGE = "observation.image"
_OBS_IMAGES_TOP = "observation.images.top"


# --------------------------------------------------------------------- ACT
def _act_policy():
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.act.modeling_act import ACTPolicy

    config = ACTConfig(pretrained_backbone_weights=None, device="cpu")
    configure(config, state=14, action=14, images={_OBS_IMAGES_TOP: (3, 480, 640)})
    return ACTPolicy(config)


class _ACTModel(nn.Module):
    """``ACT.forward`` on a batch as ``predict_action_chunk`` builds it."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, state: Tensor, image: Tensor) -> Tensor:
        batch = {"observation.state": state, "observation.images": [image]}
        return self.model(batch)[0]


@register(
    "act/model",
    "ACT model(batch): ResNet18 backbone + transformer encoder/decoder -> action chunk",
    notes="exported unchanged: ACT's per-token list(cam_features)/stack stays as unbind/select nodes",
)
def act_model():
    policy = _act_policy()
    return _ACTModel(policy.model), (torch.randn(1, 14), torch.randn(1, 3, 480, 640))


# --------------------------------------------------------------- Diffusion
def _diffusion_policy(**overrides: Any):
    from lerobot.policies.diffusion.configuration_diffusion import DiffusionConfig
    from lerobot.policies.diffusion.modeling_diffusion import DiffusionPolicy

    config = DiffusionConfig(pretrained_backbone_weights=None, device="cpu", **overrides)
    configure(config, state=2, action=2, images={_OBS_IMAGE: (3, 96, 96)})
    return DiffusionPolicy(config)


def _diffusion_cond_dim(policy) -> int:
    config = policy.config
    return (config.robot_state_feature.shape[0] + _diffusion_encoder(policy).feature_dim) * config.n_obs_steps


def _diffusion_encoder(policy) -> nn.Module:
    encoder = policy.diffusion.rgb_encoder
    # use_separate_rgb_encoder_per_camera (the default) makes a ModuleList, one per camera.
    return encoder[0] if isinstance(encoder, nn.ModuleList) else encoder


@register(
    "diffusion/rgb_encoder",
    "Diffusion RGB encoder: center crop + ResNet18 (GroupNorm) + SpatialSoftmax",
)
def diffusion_rgb_encoder():
    policy = _diffusion_policy()
    n = policy.config.n_obs_steps
    return _diffusion_encoder(policy), (torch.randn(n, 3, 96, 96),)


@register(
    "diffusion/rgb_encoder_per_frame",
    "What-if: the diffusion RGB encoder called once per frame (batch 1)",
    notes="what-if: the only change from diffusion/rgb_encoder is the batch, 1 instead of n_obs_steps (2); "
    "the Vulkan convolution takes batch 1 only, so a user calling the encoder per frame moves it to the GPU",
)
def diffusion_rgb_encoder_per_frame():
    return _diffusion_encoder(_diffusion_policy()), (torch.randn(1, 3, 96, 96),)


@register("diffusion/unet_step", "Diffusion: one conditional 1D-UNet denoising step")
def diffusion_unet_step():
    policy = _diffusion_policy()
    config = policy.config
    sample = torch.randn(1, config.horizon, 2)
    timestep = torch.tensor([10], dtype=torch.long)
    cond = torch.randn(1, _diffusion_cond_dim(policy))
    return policy.diffusion.unet, (sample, timestep, cond)


class _DiffusionSample(nn.Module):
    """``generate_actions`` minus the random prior: conditioning + the whole sampling loop."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, state: Tensor, images: Tensor, noise: Tensor) -> Tensor:
        batch = {"observation.state": state, "observation.images": images}
        cond = self.model._prepare_global_conditioning(batch)
        return self.model.conditional_sample(state.shape[0], global_cond=cond, noise=noise)


@register(
    "diffusion/sample_loop",
    "Diffusion: global conditioning + the full DDPM sampling loop (noise given as an input)",
    notes="10 inference steps (num_inference_steps=10) so the unrolled graph stays tractable; "
    "the scheduler's step is traced into the graph",
)
def diffusion_sample_loop():
    policy = _diffusion_policy(num_inference_steps=10)
    config = policy.config
    n = config.n_obs_steps
    state = torch.randn(1, n, 2)
    images = torch.randn(1, n, 1, 3, 96, 96)
    noise = torch.randn(1, config.horizon, 2)
    return _DiffusionSample(policy.diffusion), (state, images, noise)


# ------------------------------------------------------------------- TDMPC
def _tdmpc_policy():
    from lerobot.policies.tdmpc.configuration_tdmpc import TDMPCConfig
    from lerobot.policies.tdmpc.modeling_tdmpc import TDMPCPolicy

    config = TDMPCConfig(device="cpu")
    configure(config, state=4, action=4, images={_OBS_IMAGE: (3, 84, 84)})
    return TDMPCPolicy(config)


class _TDMPCEncoder(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image: Tensor, state: Tensor) -> Tensor:
        return self.model.encode({_OBS_IMAGE: image, "observation.state": state})


class _TDMPCPi(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, z: Tensor) -> Tensor:
        return self.model.pi(z)


class _TDMPCDynamics(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, z: Tensor, a: Tensor) -> tuple[Tensor, Tensor]:
        return self.model.latent_dynamics_and_reward(z, a)


class _TDMPCQs(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, z: Tensor, a: Tensor) -> Tensor:
        return self.model.Qs(z, a)


@register("tdmpc/encoder", "TDMPC observation encoder (image conv stack + state MLP) -> latent")
def tdmpc_encoder():
    policy = _tdmpc_policy()
    return _TDMPCEncoder(policy.model), (torch.randn(1, 3, 84, 84), torch.randn(1, 4))


def _tdmpc_plan_batch(policy) -> tuple[int, int]:
    config = policy.config
    return config.n_gaussian_samples + config.n_pi_samples, config.latent_dim


@register("tdmpc/pi", "TDMPC policy prior pi(z) over a planning batch of latents")
def tdmpc_pi():
    policy = _tdmpc_policy()
    batch, latent = _tdmpc_plan_batch(policy)
    return _TDMPCPi(policy.model), (torch.randn(batch, latent),)


@register("tdmpc/dynamics", "TDMPC latent dynamics + reward over a planning batch (one MPPI rollout step)")
def tdmpc_dynamics():
    policy = _tdmpc_policy()
    batch, latent = _tdmpc_plan_batch(policy)
    return _TDMPCDynamics(policy.model), (torch.randn(batch, latent), torch.randn(batch, 4))


@register("tdmpc/q", "TDMPC ensemble of Q heads over a planning batch (terminal value in MPPI)")
def tdmpc_q():
    policy = _tdmpc_policy()
    batch, latent = _tdmpc_plan_batch(policy)
    return _TDMPCQs(policy.model), (torch.randn(batch, latent), torch.randn(batch, 4))


# ------------------------------------------------------------------ VQ-BeT
def _vqbet_policy():
    from lerobot.policies.vqbet.configuration_vqbet import VQBeTConfig
    from lerobot.policies.vqbet.modeling_vqbet import VQBeTPolicy

    config = VQBeTConfig(pretrained_backbone_weights=None, device="cpu")
    configure(config, state=2, action=2, images={_OBS_IMAGE: (3, 96, 96)})
    return VQBeTPolicy(config)


class _VQBeTRollout(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, state: Tensor, images: Tensor) -> Tensor:
        return self.model({"observation.state": state, "observation.images": images}, rollout=True)


@register(
    "vqbet/rollout",
    "VQ-BeT vqbet(batch, rollout=True): ResNet18 + GPT + code sampling + RVQ decoder",
    notes="the residual VQ is untrained (discretized=False); the rollout graph is the same",
)
def vqbet_rollout():
    policy = _vqbet_policy()
    n = policy.config.n_obs_steps
    return _VQBeTRollout(policy.vqbet), (torch.randn(1, n, 2), torch.randn(1, n, 1, 3, 96, 96))


def _vqbet_gpt_tokens(config) -> int:
    """GPT sequence length ``VQBeTModel.forward`` builds: per observation step one token per
    input feature (each camera, the state) plus an action query, then the extra future queries."""
    return config.n_obs_steps * (len(config.input_features) + 1) + config.n_action_pred_token - 1


class _VQBeTHeadPredictions(nn.Module):
    """``VQBeTHead.forward`` up to ``torch.multinomial``: the bin and offset MLPs on the GPT's
    action-query features -> (code probabilities ``(NT, G, C)``, offsets ``(NT, G, C, chunk * action)``).

    Sampling, the offset gather and the RVQ decoder stay out: they are the code-sampling tail
    ``vqbet/rollout`` already covers.
    """

    def __init__(self, head: nn.Module) -> None:
        super().__init__()
        self.head = head

    def forward(self, features: Tensor) -> tuple[Tensor, Tensor]:
        head, config = self.head, self.head.config
        layers = head.vqvae_model.vqvae_num_layers
        x = features.flatten(0, 1)  # "N T WA -> (N T) WA"
        offsets = head.map_to_cbet_preds_offset(x).unflatten(-1, (layers, config.vqvae_n_embed, -1))
        logits = head.map_to_cbet_preds_bin(x).unflatten(-1, (layers, -1))
        return torch.softmax(logits / config.bet_softmax_temperature, dim=-1), offsets


@register(
    "vqbet/rgb_encoder",
    "VQ-BeT RGB encoder: center crop (eval) + ResNet18 (BatchNorm) + SpatialSoftmax + linear",
    notes="batch = n_obs_steps (5): the policy flattens (batch, n_obs_steps, cameras) into one image batch",
)
def vqbet_rgb_encoder():
    policy = _vqbet_policy()
    n = policy.config.n_obs_steps
    return policy.vqbet.rgb_encoder, (torch.randn(n, 3, 96, 96),)


@register(
    "vqbet/rgb_encoder_per_frame",
    "What-if: the VQ-BeT RGB encoder called once per frame (batch 1)",
    notes="what-if: the only change from vqbet/rgb_encoder is the batch, 1 instead of n_obs_steps (5)",
)
def vqbet_rgb_encoder_per_frame():
    return _vqbet_policy().vqbet.rgb_encoder, (torch.randn(1, 3, 96, 96),)


@register(
    "vqbet/gpt",
    "VQ-BeT GPT (minGPT, 8 layers, 512 wide) over the interleaved observation/action-query tokens",
)
def vqbet_gpt():
    policy = _vqbet_policy()
    config = policy.config
    return policy.vqbet.policy, (torch.randn(1, _vqbet_gpt_tokens(config), config.gpt_input_dim),)


@register(
    "vqbet/action_head",
    "VQ-BeT action head: bin (code logits -> softmax) and offset MLPs on the GPT's action-query features",
    notes="stops before torch.multinomial (sequentially_select=False, the default); "
    "code sampling and the RVQ decoder are in vqbet/rollout",
)
def vqbet_action_head():
    policy = _vqbet_policy()
    config = policy.config
    queries = config.n_obs_steps + config.n_action_pred_token - 1
    head = _VQBeTHeadPredictions(policy.vqbet.action_head)
    return head, (torch.randn(1, queries, config.gpt_output_dim),)


# -------------------------------------------------------------- SAC actor
def _gaussian_actor_policy():
    from lerobot.policies.gaussian_actor.configuration_gaussian_actor import GaussianActorConfig
    from lerobot.policies.gaussian_actor.modeling_gaussian_actor import GaussianActorPolicy

    config = GaussianActorConfig(device="cpu")
    configure(config, state=2, action=3, images={_OBS_IMAGE: (3, 128, 128)})
    return GaussianActorPolicy(config)


class _DeterministicActor(nn.Module):
    """The actor's mode: encoder -> MLP -> mean -> tanh (no sampling, no log-prob)."""

    def __init__(self, actor: nn.Module) -> None:
        super().__init__()
        self.actor = actor

    #: ``get_cached_image_features`` splits the batched image features per camera with ``torch.chunk``.
    chunk_per_camera = True

    def forward(self, state: Tensor, image: Tensor) -> Tensor:
        obs = {"observation.state": state, _OBS_IMAGE: image}
        encoder = self.actor.encoder
        cache = None if self.chunk_per_camera else {_OBS_IMAGE: encoder.image_encoder(image)}
        features = encoder(obs, cache=cache, detach=False)
        means = self.actor.mean_layer(self.actor.network(features))
        return torch.tanh(means) if self.actor.use_tanh_squash else means


class _DeterministicActorWithoutChunk(_DeterministicActor):
    """One camera: the image features go straight into the cache, without ``torch.chunk(out, 1)``."""

    chunk_per_camera = False


@register(
    "gaussian_actor/deterministic",
    "SAC (gaussian_actor) deterministic actor: image+state encoder -> MLP -> tanh(mean)",
)
def gaussian_actor_deterministic():
    policy = _gaussian_actor_policy()
    return _DeterministicActor(policy.actor), (torch.randn(1, 2), torch.randn(1, 3, 128, 128))


@register(
    "gaussian_actor/deterministic_without_chunk",
    "SAC deterministic actor, rewritten to partition: gaussian_actor/deterministic minus one torch.chunk",
    notes="rewrite: with one camera get_cached_image_features' torch.chunk(out, 1) is the identity, and its "
    "single-piece split_with_sizes crashes the Vulkan partitioner (probe split_one_piece); the features "
    "go into the encoder's cache directly; nothing else differs",
)
def gaussian_actor_deterministic_without_chunk():
    policy = _gaussian_actor_policy()
    return _DeterministicActorWithoutChunk(policy.actor), (torch.randn(1, 2), torch.randn(1, 3, 128, 128))
