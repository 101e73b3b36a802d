"""Runtime benchmarks: ``Many(n)`` executed on the Vulkan backend, by each runner.

``runner`` is ``python`` (``executorch.runtime`` of a Vulkan-enabled build,
e.g. on Mesa lavapipe) or ``native`` (the C++ ``pte_runner`` named by
``VKBENCH_PTE_RUNNER``, e.g. on the H200 device, whose Python cannot execute
programs). A runner that is unavailable here skips its benchmarks with the
reason (``vkbench doctor`` says it too); nothing is lowered for it.
Times are the runner's own median ``execute`` in seconds (see
:mod:`vkbench.execution`). Whether the backend was built with the event
tracer is a property of the environment (one machine name per build): with
it, every dispatch takes 2 QueryPool timestamps of 4096, so ``Many(n)`` (2
dispatches per step) stops executing near n = 1000.
"""

from __future__ import annotations

from vkbench.suite.catalogue import MANY_SIZES as SIZES
from vkbench.suite.catalogue import PROBE_WORKLOADS, RUNNERS  # probes as runtime workloads

from .common import require_import, safe_import, skip, suite_version

version = suite_version(__name__)  # asv: every benchmark here, a digest of the code its records run

_record, _IMPORT_ERROR = safe_import("vkbench.execution.record")
_step_limit, _ = safe_import("vkbench.execution.step_limit")


def _require() -> None:
    require_import(_IMPORT_ERROR, "vkbench.execution")


class ManyRuntime:
    """``Many(n)``: a chain of 2n elementwise dispatches in one Vulkan delegate.

    ``setup_cache`` lowers each size once and executes it with every runner
    that can run here, in a child process (a size that fails, even by
    aborting, is recorded with its stage and error and skipped with it).
    """

    params = [SIZES, RUNNERS]
    param_names = ["n", "runner"]
    timeout = 3600

    def setup_cache(self):
        _require()
        return _record.record([f"many/{n}" for n in SIZES], ["vulkan"], RUNNERS)

    # Lowering Many(4000) alone takes half an hour on 2 cores (VKBENCH_BUNDLES keeps programs).
    setup_cache.timeout = 7200

    def setup(self, cache, n, runner):
        _require()
        self.outcome = _record.require(cache, f"many/{n}", "vulkan", runner)

    def track_execute_seconds(self, cache, n, runner):
        return self.outcome["execute_s"]

    track_execute_seconds.unit = "seconds"

    def track_us_per_dispatch(self, cache, n, runner):
        return self.outcome["execute_s"] / (2 * n) * 1e6

    track_us_per_dispatch.unit = "us"

    def track_max_abs_diff(self, cache, n, runner):
        """Largest absolute difference from eager PyTorch's output."""
        return self.outcome["max_abs_diff"]

    track_max_abs_diff.unit = "abs diff"


class ManyEager:
    """Eager PyTorch ``Many(n)``: the baseline for ``ManyRuntime.track_execute_seconds``."""

    params = SIZES
    param_names = ["n"]

    def setup(self, n):
        _require()
        from vkbench.execution.bundle import build

        self.module, (self.x,) = build(f"many/{n}")

    def time_eager(self, n):
        import torch

        with torch.no_grad():
            self.module(self.x)


class StepLimit:
    """The largest ``n`` for which ``Many(n)`` executes on Vulkan with this runner.

    Found by doubling from ``VKBENCH_STEP_START`` (256) until a size fails or
    ``VKBENCH_STEP_CAP`` (4000, the largest ``ManyRuntime`` size) runs, then
    bisecting: about log2(limit) probes, each a fresh child process
    (:mod:`vkbench.execution.step_limit`). asv reads a rising track as a
    regression, so the track is the number of steps *short of the cap*:
    ``cap - limit`` (0: every size up to the cap ran).
    """

    params = RUNNERS
    param_names = ["runner"]
    timeout = 7200

    def setup(self, runner):
        _require()
        from vkbench.execution.runners import runner as named

        ready, reason = named(runner).ready("vulkan")
        if not ready:
            skip(reason)

    def track_steps_short_of_cap(self, runner):
        return _step_limit.find_step_limit(_step_limit.probe_with(runner)).short_of_cap

    track_steps_short_of_cap.unit = "steps"


class ProbeLadder:
    """How far each op probe gets on Vulkan: lowered, loads, runs, matches eager.

    ``bench_probes`` stops at the partitioner, but four of the upstream-bug
    probes fail in the runtime (``mha_cross``, ``index_dim1``,
    ``layer_norm_no_affine`` and ``logical_not`` lower, then do not load), so
    only executing them shows the commit that fixes one.
    The track is the rungs missed, as in ``PolicyLadder`` (0: matches eager;
    4: nothing delegated to Vulkan). The probes are tiny: the whole grid
    lowers in a few minutes.
    """

    params = [PROBE_WORKLOADS, RUNNERS]
    param_names = ["probe", "runner"]
    timeout = 1800

    def setup_cache(self):
        _require()
        return _record.record(PROBE_WORKLOADS, ["vulkan"], RUNNERS)

    setup_cache.timeout = 3600

    def setup(self, cache, probe, runner):
        _require()
        self.rungs_short = _record.rungs_short(cache, probe, "vulkan", runner)

    def track_rungs_short(self, cache, probe, runner):
        return self.rungs_short

    track_rungs_short.unit = "rungs"
