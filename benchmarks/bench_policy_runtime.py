"""Policy entries executed by the ExecuTorch runtime: Vulkan against the CPU backends.

For the fast entries that lower fully or mostly to Vulkan, the same exported
computation is lowered for ``vulkan``, ``xnnpack`` and ``portable`` (no
delegate) through the one lowering path and executed by each ``runner``
(``python``: ``executorch.runtime``; ``native``: the C++ ``pte_runner``).
``track_forward_seconds`` is the runner's median ``execute``;
``track_max_abs_diff`` the largest absolute difference of the float outputs
from eager PyTorch, whose own forward is ``PolicyEager.time_forward``.

A combination that cannot run here skips (``NotImplementedError``) with the
reason: no runner, a runtime that cannot execute programs (the PyPI 1.5.1
wheel with torch 2.11), no registered backend, or the stage and error where
lowering, loading, executing or comparing failed (see :mod:`vkbench.execution`).
"""

from __future__ import annotations

# The grids are fixed in the catalogue, not read from the measured project: one grid per commit.
from vkbench.suite.catalogue import FAST_ENTRIES, RUNNERS, VLA_ENTRIES
from vkbench.suite.catalogue import RUNTIME_BACKENDS as BACKENDS
from vkbench.suite.catalogue import RUNTIME_ENTRIES as ENTRIES

from .common import require_import, safe_import, skip, suite_version

version = suite_version(__name__)  # asv: every benchmark here, a digest of the code its records run

_record, _IMPORT_ERROR = safe_import("vkbench.execution.record")


def _require() -> None:
    require_import(_IMPORT_ERROR, "vkbench.execution")


class PolicyRuntime:
    """One policy entry's forward, lowered for one backend, executed by one runner."""

    params = [ENTRIES, BACKENDS, RUNNERS]
    param_names = ["entry", "backend", "runner"]
    timeout = 1800

    def setup_cache(self):
        _require()
        return _record.record(ENTRIES, BACKENDS, RUNNERS)

    # Lowering act/model for three backends takes minutes on 2 loaded cores.
    setup_cache.timeout = 3600

    def setup(self, cache, entry, backend, runner):
        _require()
        self.outcome = _record.require(cache, entry, backend, runner)

    def track_forward_seconds(self, cache, entry, backend, runner):
        return self.outcome["execute_s"]

    track_forward_seconds.unit = "seconds"

    def track_max_abs_diff(self, cache, entry, backend, runner):
        """Largest absolute difference from eager over the float outputs."""
        return self.outcome["max_abs_diff"]

    track_max_abs_diff.unit = "abs diff"


class PolicyEager:
    """The entry's eager PyTorch forward: the baseline for ``PolicyRuntime``."""

    params = ENTRIES
    param_names = ["entry"]
    timeout = 600

    def setup(self, entry):
        _require()
        from vkbench.execution.bundle import build

        try:
            self.module, self.inputs = build(entry)
        except KeyError as error:
            skip(f"{entry} is not a policy entry at this commit: {error}")

    def time_forward(self, entry):
        import torch

        with torch.no_grad():
            self.module(*self.inputs)


def _ladder(entries: list[str]) -> dict:
    _require()
    return _record.record(entries, ["vulkan"], RUNNERS)


class PolicyLadder:
    """How far each fast policy entry gets on Vulkan: lowered, loads, runs, matches eager.

    ExecuTorch's own backend tests sort every case onto this ladder; the
    track is the rungs missed (0: the output matches eager PyTorch with SNR
    ≥ 40 dB; 4: it does not lower), so a fix reads as a drop. Each entry is
    lowered once per commit and run by each runner that can execute Vulkan
    programs here (a runner that cannot is skipped with the reason; nothing
    is lowered for it). ``VLAPolicyLadder`` does the same for the reduced
    VLAs, apart because they take about 20 minutes to lower on 2 cores
    (each class has its own ``setup_cache``: asv keys a cache by its source line).
    """

    params = [FAST_ENTRIES, RUNNERS]
    param_names = ["entry", "runner"]
    timeout = 3600

    def setup_cache(self):
        return _ladder(FAST_ENTRIES)

    setup_cache.timeout = 10800

    def setup(self, cache, entry, runner):
        _require()
        self.rungs_short = _record.rungs_short(cache, entry, "vulkan", runner)

    def track_rungs_short(self, cache, entry, runner):
        return self.rungs_short

    track_rungs_short.unit = "rungs"


class VLAPolicyLadder(PolicyLadder):
    """:class:`PolicyLadder` for the reduced VLA entries."""

    params = [VLA_ENTRIES, RUNNERS]

    def setup_cache(self):
        return _ladder(VLA_ENTRIES)

    setup_cache.timeout = 10800
