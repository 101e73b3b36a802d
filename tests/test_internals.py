"""Units of the lowering path that need no ExecuTorch program."""

from __future__ import annotations

import logging
import sys
import time

import pytest

from vkbench.core.phases import PhaseClock, patched
from vkbench.core.reasons import NOT_REPORTED, SkipReasons, recording_skip_reasons


class Owner:
    def work(self, x):
        return x + 1

    @classmethod
    def cls_work(cls, x):
        return x * 2


class Child(Owner):
    pass


def test_patched_restores_methods_and_classmethods():
    original = Owner.__dict__["cls_work"]
    with patched(Owner, "cls_work", lambda f: lambda cls, x: f(cls, x) + 100) as hooked:
        assert hooked and Owner.cls_work(1) == 102
    assert Owner.__dict__["cls_work"] is original and Owner.cls_work(1) == 2
    with patched(Child, "work", lambda f: lambda self, x: -1):
        assert Child().work(1) == -1 and Owner().work(1) == 2
    assert "work" not in vars(Child)  # inherited attribute removed again, not shadowed
    with patched(Owner, "missing", lambda f: f) as hooked:
        assert not hooked


def test_phase_clock_is_exclusive():
    clock = PhaseClock()
    with clock.phase("outer"):
        time.sleep(0.02)
        with clock.phase("inner"):
            time.sleep(0.05)
    assert clock.seconds["inner"] >= 0.05
    assert 0.02 <= clock.seconds["outer"] < 0.05
    assert clock.calls == {"outer": 1, "inner": 1}


def test_reasons_fall_back_to_the_log_line_when_log_skip_is_absent():
    """Commits without ``log_skip`` still log the reason; we key it by op name."""
    with recording_skip_reasons(None) as reasons:
        logging.getLogger("").info(
            "[Vulkan Partitioner] Due to [no operator implementation], skipping "
            "[1, 16, 32] = aten.elu.default([1, 16, 32],  ...)"
        )
    assert reasons.for_node("anything", "aten.elu.default") == ["no operator implementation"]
    assert SkipReasons().for_node("n", "aten.x") == [NOT_REPORTED]


def test_partitioner_chatter_does_not_reach_the_root_handlers(caplog):
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanSupportedOperators

    class FakeNode:
        op = "call_function"
        name = "n0"
        target = "aten.fake.default"
        args = ()
        meta: dict = {}

    with caplog.at_level(logging.INFO), recording_skip_reasons(VulkanSupportedOperators) as reasons:
        try:
            VulkanSupportedOperators.log_skip(object.__new__(VulkanSupportedOperators), FakeNode(), "why")
        except Exception:  # noqa: BLE001 - node_io_str may reject the fake node; the hook ran first
            pass
    assert reasons.by_node["n0"] == ["why"]
    assert not [r for r in caplog.records if "Due to" in r.getMessage()]


@pytest.mark.parametrize("bad", ["0", "-3", "x"])
def test_positive_size_rejects(bad):
    from vkbench.workloads.graphs import positive_size

    with pytest.raises(ValueError):
        positive_size(bad)


def test_a_crash_inside_the_partitioner_names_the_partition_stage(monkeypatch):
    import torch
    from executorch.backends.vulkan.partitioner import vulkan_partitioner

    from vkbench.core.lowering import LoweringError, lower

    def broken(self, exported_program):
        raise AttributeError("'list' object has no attribute 'shape'")

    monkeypatch.setattr(vulkan_partitioner.VulkanPartitioner, "partition", broken)
    with pytest.raises(LoweringError) as caught:
        lower(torch.nn.ReLU(), (torch.randn(2, 3),))
    assert caught.value.stage == "partition"
    assert caught.value.error_type == "AttributeError"


def test_child_stderr_is_captured_echoed_and_attached(capsys):
    import subprocess

    from vkbench.core.failures import child_stderr_captured, first_error_line

    script = ("import sys; print('note: fine', file=sys.stderr); "
              "print('fatal: no kernel', file=sys.stderr); sys.exit(3)")
    with child_stderr_captured(), pytest.raises(subprocess.CalledProcessError) as raised:
        subprocess.run([sys.executable, "-c", script], check=True)
    assert "fatal: no kernel" in capsys.readouterr().err  # still shown to whoever watches
    line = first_error_line(raised.value)
    assert line.endswith("fatal: no kernel") and "exit status 3" in line
    # callers that choose their own stderr are left alone, and the patch is undone
    with child_stderr_captured():
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 3 and "fatal" in done.stderr
    assert subprocess.run.__module__ == "subprocess"


def test_first_error_line_of_a_plain_exception():
    from vkbench.core.failures import first_error_line

    assert first_error_line(ValueError("\n  bad shape\nmore")) == "bad shape"


def test_a_child_error_label_on_its_own_line_is_joined_with_its_message():
    import subprocess

    from vkbench.core.failures import first_error_line

    stderr = b"error:\n  schema.json:3: 7: error: bad value\n"
    error = subprocess.CalledProcessError(1, ["flatc"], stderr=stderr)
    assert first_error_line(error).endswith("status 1. error: schema.json:3: 7: error: bad value")


def test_the_export_cache_defaults_into_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``VKBENCH_CACHE`` the exported programs stay in the checkout's ``.asv``, never in ``~``."""
    from vkbench.paths import STATE
    from vkbench.workloads.policies.cache import cache_dir

    monkeypatch.delenv("VKBENCH_CACHE", raising=False)
    assert cache_dir().is_relative_to(STATE / "cache" / "exported")
