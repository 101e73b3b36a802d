"""Policy entries executed by the ExecuTorch runtime: Vulkan against the CPU backends.

For the fast entries that lower fully or mostly to Vulkan, ``time_forward``
times ``method.execute`` of the same exported computation lowered for
``vulkan``, ``xnnpack`` and ``portable`` (no delegate) through
``vkbench.lowering.lower``, and ``eager`` PyTorch as the baseline;
``track_max_abs_diff`` is the largest absolute difference of the runtime's
float outputs from eager's (see :mod:`vkbench.policy_runtime`).

``setup_cache`` lowers and checks every (entry, backend) once, each entry in
a child process (a Vulkan abort is recorded, not fatal), keeping the program
bytes. A combination that cannot run here raises ``NotImplementedError`` in
``setup`` (asv: skipped) with the reason: no ``executorch.runtime``, a runtime
that cannot execute programs (the PyPI 1.5.1 wheel with torch 2.11), no
registered ``VulkanBackend``, or the stage and error where lowering, loading,
executing or comparing failed. When no runtime backend is ready nothing is
lowered, so this costs seconds on such a machine.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

from .common import quiet, safe_import

_pr, _IMPORT_ERROR = safe_import("vkbench.policy_runtime")

#: Fixed here, not read from the measured project, so the grid is the same for every commit.
ENTRIES = ["act/model", "tdmpc/encoder", "tdmpc/pi", "tdmpc/dynamics", "tdmpc/q"]
RUNTIME_BACKENDS = ["vulkan", "xnnpack", "portable"]
BACKENDS = ["eager", *RUNTIME_BACKENDS]


def _require() -> None:
    if _IMPORT_ERROR is not None:
        raise NotImplementedError(f"vkbench.policy_runtime cannot import here: {_IMPORT_ERROR}")


def measure_all(entries: list[str], backends: list[str] = RUNTIME_BACKENDS) -> dict[str, Any]:
    """``{"runs": {entry: {backend: Run JSON}}, "pte": {entry: {backend: bytes}}}``.

    Backends whose runtime is not ready get a ``runtime`` failure without
    being lowered; the others are measured per entry in a child process.
    """
    quiet()
    if _IMPORT_ERROR is not None:
        return {"skip": f"vkbench.policy_runtime cannot import here: {_IMPORT_ERROR}"}
    ready = {backend: _pr.runtime_ready(backend) for backend in backends}
    live = [backend for backend in backends if ready[backend][0]]
    cache: dict[str, Any] = {"runs": {}, "pte": {}}
    for entry in entries:
        runs = {b: _pr.Run(entry, b).fail("runtime", ready[b][1]) for b in backends if b not in live}
        programs: dict[str, bytes] = {}
        if live:
            with tempfile.TemporaryDirectory() as tmp:
                for run in _pr.measure_isolated(entry, live, save_dir=tmp):
                    runs[run.backend] = run
                    path = Path(tmp) / f"{run.backend}.pte"
                    if run.ok and path.exists():
                        programs[run.backend] = path.read_bytes()
        cache["runs"][entry] = {b: runs[b].to_json() for b in backends}
        cache["pte"][entry] = programs
    return cache


class PolicyRuntime:
    """One policy entry's forward on one backend (``eager``: PyTorch itself)."""

    params = [ENTRIES, BACKENDS]
    param_names = ["entry", "backend"]
    timeout = 1800
    processes = 1

    def setup_cache(self) -> dict[str, Any]:
        return measure_all(ENTRIES)

    # Lowering act/model for three backends takes minutes on 2 loaded cores.
    setup_cache.timeout = 3600

    def setup(self, cache: dict[str, Any], entry: str, backend: str) -> None:
        quiet()
        _require()
        if "skip" in cache:
            raise NotImplementedError(cache["skip"])
        if backend != "eager":
            run = cache["runs"][entry][backend]
            if not run["ok"]:
                raise NotImplementedError(f"{entry} on {backend}: {run['stage']}: {run['error']}")
        from vkbench.policies import ENTRIES as registry

        if entry not in registry:
            raise NotImplementedError(f"{entry} is not a policy entry at this commit")
        module, inputs = registry[entry].build()
        if backend == "eager":
            import torch

            def forward() -> Any:
                with torch.no_grad():
                    return module(*inputs)

            self.forward = forward
        else:
            method = _pr.rt.load_method(cache["pte"][entry][backend], require_vulkan=False)
            args = _pr.flat_tensors(inputs)
            self.forward = lambda: method.execute(args)
        self.forward()  # warm-up: the first execute allocates (and, on Vulkan, records)

    def time_forward(self, cache: dict[str, Any], entry: str, backend: str) -> None:
        self.forward()

    def track_max_abs_diff(self, cache: dict[str, Any], entry: str, backend: str) -> float:
        """Largest absolute difference from eager over the float outputs (eager: 0)."""
        if backend == "eager":
            return 0.0
        value = cache["runs"][entry][backend]["max_abs_diff"]
        return math.nan if value is None else value

    track_max_abs_diff.unit = "abs diff"


class PolicyNative:
    """The same entries executed by the C++ runner (:mod:`vkbench.native.policies`).

    For a machine that runs ExecuTorch's C++ runtime but not its Python
    package or lerobot (the H200 device): programs, inputs and eager outputs
    are prepared elsewhere (``python -m vkbench.native.policies export DIR``,
    ``VKBENCH_POLICY_IO=DIR``) and run by ``VKBENCH_PTE_RUNNER`` (built with
    the Vulkan, XNNPACK and optimized-kernel libraries). The runner's own clock
    times ``Method::execute`` (median of 10 after a warm-up): tracks in seconds.
    """

    params = [ENTRIES, RUNTIME_BACKENDS]
    param_names = ["entry", "backend"]
    timeout = 1800

    def setup_cache(self) -> dict[str, Any]:
        try:
            from vkbench.native import policies as native_policies

            native_policies.require_runner()
            if native_policies.io_dir() is None:
                raise NotImplementedError(f"no policy programs: set {native_policies.IO_ENV}")
        except (ImportError, NotImplementedError) as error:
            return {"skip": str(error)}
        return {entry: {backend: native_policies.run_policy(entry, backend) for backend in RUNTIME_BACKENDS}
                for entry in ENTRIES}

    def setup(self, cache: dict[str, Any], entry: str, backend: str) -> None:
        if "skip" in cache:
            raise NotImplementedError(cache["skip"])
        run = cache[entry][backend]
        if not run["ok"]:
            raise NotImplementedError(f"{entry} on {backend}: {run['stage']}: {run['error']}")

    def track_forward(self, cache: dict[str, Any], entry: str, backend: str) -> float:
        return cache[entry][backend]["forward_s"]

    track_forward.unit = "seconds"

    def track_max_abs_diff(self, cache: dict[str, Any], entry: str, backend: str) -> float:
        return cache[entry][backend]["max_abs_diff"]

    track_max_abs_diff.unit = "abs diff"
