"""MolmoAct2 entries: the wrappers recompute lerobot's continuous inference; the rewrite changes nothing.

Building the policy imports lerobot's MolmoAct2 stack and transformers (~20 s
on a loaded machine), so the tests that build it are slow and share one policy.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

pytest.importorskip("vkbench.workloads.policies")

from vkbench.workloads.policies import ENTRIES  # noqa: E402

pytest.importorskip("transformers")


def test_molmoact2_entries_and_the_rewrite_note():
    """One entry per network run per chunk, the hub-blocked default row kept, the rewrite's note first."""
    names = {name for name in ENTRIES if name.startswith("molmoact2/")}
    assert names == {"molmoact2/model", "molmoact2/prefix", "molmoact2/prefix_fixed_layout",
                     "molmoact2/denoise_step"}
    assert ENTRIES["molmoact2/model"].reduced == ""  # the default config, blocked at build
    assert ENTRIES["molmoact2/prefix_fixed_layout"].notes.startswith("rewrite: ")
    assert all(ENTRIES[name].reduced for name in names - {"molmoact2/model"})


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, torch.Tensor]]:
    from vkbench.workloads.policies import molmoact2

    torch.manual_seed(0)
    return molmoact2._policy(), molmoact2.model_inputs()


@pytest.mark.slow
def test_molmoact2_prefix_and_steps_reproduce_predict_action_chunk(built):
    """prefix + 10 x denoise_step (with lerobot's cached modulations) == ``predict_action_chunk``."""
    from vkbench.workloads.policies import molmoact2

    policy, inputs = built
    with torch.no_grad():
        expected = policy.predict_action_chunk(dict(inputs), generator=torch.Generator().manual_seed(3))
        trajectory = torch.randn((1, 30, 32), generator=torch.Generator().manual_seed(3))
        pad = inputs["action_dim_is_pad"]
        trajectory = trajectory.masked_fill(pad[:, None, :], 0)
        keys, values, cross_mask = molmoact2._Prefix(policy)(*(inputs[key] for key in molmoact2._PREFIX_KEYS))
        steps = molmoact2._steps(policy)
        step = molmoact2._DenoiseStep(policy, steps)
        expert = policy._backbone()._require_action_expert()
        for index in range(steps):
            modulation = molmoact2.stacked_modulation(expert, torch.full((1,), index / steps))
            trajectory = step(trajectory, modulation, keys, values, cross_mask, pad)
    assert steps == 10
    noise = torch.randn((1, 30, 32), generator=torch.Generator().manual_seed(3))[:, :, :7]
    assert not torch.allclose(expected, noise)  # the random action expert does move the chunk
    torch.testing.assert_close(trajectory[:, :, :7], expected, rtol=0, atol=0)
    assert not trajectory[:, :, 7:].any()  # padded action dims stay zero


@pytest.mark.slow
def test_molmoact2_fixed_layout_rewrite_computes_what_the_prefix_computes(built):
    """The export rewrite only re-expresses ragged glue: same keys, values and cross-attention mask."""
    from vkbench.workloads.policies import molmoact2

    policy, inputs = built
    with torch.no_grad():
        expected = molmoact2._Prefix(policy)(*(inputs[key] for key in molmoact2._PREFIX_KEYS))
        got = molmoact2._PrefixFixedLayout(policy)(*molmoact2.fixed_layout_inputs(policy, inputs))
    for a, b in zip(got, expected, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
