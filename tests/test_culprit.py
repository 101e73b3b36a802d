"""Narrowing a runtime symptom to the delegated op types that cause it (vkbench.execution.culprit)."""

from __future__ import annotations

import math

import pytest
import torch

from vkbench.core.lowering import lower
from vkbench.execution.culprit import Symptom, narrow
from vkbench.execution.outcome import Outcome
from vkbench.workloads.graphs import Fn

#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")


def _counting(culprits: set[str]):
    calls: list[list[str]] = []

    def shown(subset: list[str]) -> bool:
        calls.append(subset)
        return culprits <= set(subset)

    return shown, calls


@pytest.mark.parametrize("culprit", ["a", "d", "h", "k"])
def test_one_culprit_among_many_is_found_in_about_two_log2_trials(culprit):
    ops = list("abcdefghijk")
    shown, calls = _counting({culprit})
    assert narrow(ops, shown) == [culprit]
    assert len(calls) <= 2 * 4 + 1  # halving (at most 2 per level) and the final drop
    assert len({frozenset(c) for c in calls}) == len(calls)  # no subset tried twice


def test_two_culprits_that_show_it_only_together_are_both_kept():
    shown, _ = _counting({"b", "g"})
    assert sorted(narrow(list("abcdefgh"), shown)) == ["b", "g"]


def test_a_failure_matches_its_pattern_at_a_runtime_stage_only():
    symptom = Symptom("fails", r"make_ivec2")
    loaded = Outcome("w", "vulkan", "python").fail("load", "VecUtils.h:367 make_ivec2: (ints.size() == 2)")
    assert symptom.shown_by(loaded)
    assert not symptom.shown_by(Outcome("w", "vulkan", "python").fail("load", "isTensorRef"))
    assert not symptom.shown_by(Outcome("w", "vulkan", "python").fail("to_edge", "make_ivec2"))


def test_a_divergence_is_a_low_snr_or_a_non_finite_output():
    symptom = Symptom("diverges", min_snr_db=40.0)
    assert symptom.shown_by(Outcome("w", "vulkan", "python", ok=True, snr_db=-777.0))
    assert not symptom.shown_by(Outcome("w", "vulkan", "python", ok=True, snr_db=95.0))
    assert symptom.shown_by(Outcome("w", "vulkan", "python", ok=True, snr_db=math.nan))
    assert symptom.shown_by(Outcome("w", "vulkan", "python").fail("compare", "non-finite output"))
    assert not symptom.shown_by(Outcome("w", "vulkan", "python").fail("load", "anything"))
    with pytest.raises(ValueError):
        Symptom("slow")


def test_delegate_only_is_the_partitioners_allowlist_and_the_rest_stays_on_the_cpu():
    module = Fn(lambda t: torch.relu(t) * 2.0 + 1.0)
    full, _ = lower(module, (torch.randn(4, 8),), to_executorch=False)
    assert set(full.delegated_ops) == {"aten.relu.default", "aten.mul.Tensor", "aten.add.Tensor"}
    only, _ = lower(module, (torch.randn(4, 8),), to_executorch=False, delegate_only=["aten.relu.default"])
    assert only.delegated_ops == {"aten.relu.default": 1}
    assert only.cpu_ops == {"aten.add.Tensor": 1, "aten.mul.Tensor": 1}
    assert only.nodes_total == full.nodes_total == 3
    with pytest.raises(ValueError, match="allowlist"):
        lower(module, (torch.randn(4, 8),), backend="portable", delegate_only=[])
