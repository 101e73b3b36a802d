"""Runtime benchmarks: ``Many(n)`` executed by the ExecuTorch Vulkan runtime.

These need an ``executorch`` whose runtime registers ``VulkanBackend`` (built
by ``python -m vkbench.build full``) and a Vulkan device (an NVIDIA GPU, or
Mesa lavapipe on a CPU). On the PyPI wheel every benchmark here raises
``NotImplementedError`` in ``setup`` with the reason, which asv shows as
skipped. Programs are lowered through ``vkbench.lowering.lower`` (the one
lowering path) with the partitioner's texture limits from
``VKBENCH_TEXTURE_LIMITS`` or the device (see :mod:`vkbench.runtime`).

Whether the Vulkan backend was built with the event tracer is a property of
the environment (one venv per build), not a parameter: with the tracer every
dispatch takes 2 QueryPool timestamps of 4096, so ``Many(n)`` (2 dispatches
per step) stops executing near n = 1000; without it the limit is far higher.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from vkbench import native
from vkbench import runtime as rt

SIZES = list(rt.MANY_SIZES)


def _probe_all(sizes: list[int]) -> dict:
    """Probe each size in a child process, keeping the .pte of the ones that run."""
    registered, reason = rt.vulkan_registered()
    if not registered:
        return {"skip": reason}
    cache: dict = {"probes": {}, "pte": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"many_{n}.pte"
            probe = rt.probe_many_isolated(n, save=path)
            cache["probes"][n] = probe.to_json()
            if probe.ok and path.exists():
                cache["pte"][n] = path.read_bytes()
    return cache


def _require(cache: dict, n: int) -> bytes:
    if "skip" in cache:
        raise NotImplementedError(cache["skip"])
    probe = cache["probes"][n]
    if not probe["ok"]:
        raise NotImplementedError(f"Many({n}) does not execute: {probe['stage']}: {probe['error']}")
    return cache["pte"][n]


class ManyVulkan:
    """``Many(n)``: a chain of 2n elementwise dispatches in one Vulkan delegate.

    ``setup_cache`` lowers and runs each size once in a child process (a size
    that fails, even by aborting, is recorded there); ``time_execute`` then
    times ``method.execute`` of a freshly loaded method for the sizes that
    run, and is skipped, with the failure as the reason, for those that don't.
    ``track_max_abs_diff`` is the largest absolute difference between the
    runtime's output and eager PyTorch's (NaN where the size fails).
    """

    params = SIZES
    param_names = ["n"]
    timeout = 3600

    def setup_cache(self):
        return _probe_all(SIZES)

    # Lowering Many(4000) alone takes many minutes on a small machine
    # (set VKBENCH_PTE_CACHE to reuse .pte files between runs).
    setup_cache.timeout = 7200

    def setup(self, cache, n):
        pte = _require(cache, n)
        self.method = rt.load_method(pte)
        self.x = rt.many_input()
        self.method.execute([self.x])  # warm-up: first execute allocates and records

    def time_execute(self, cache, n):
        self.method.execute([self.x])

    def track_max_abs_diff(self, cache, n):
        return cache["probes"][n]["max_abs_diff"] if cache["probes"][n]["ok"] else math.nan

    track_max_abs_diff.unit = "abs diff"


class ManyEager:
    """Eager PyTorch ``Many(n)``: the baseline for ``ManyVulkan.time_execute``."""

    params = SIZES
    param_names = ["n"]

    def setup(self, n):
        from vkbench.graphs import Many

        self.module = Many(n).eval()
        self.x = rt.many_input()

    def time_eager(self, n):
        import torch

        with torch.no_grad():
            self.module(self.x)


class StepLimit:
    """The largest ``n`` for which ``Many(n)`` executes on the Vulkan runtime.

    Found by doubling from ``VKBENCH_STEP_START`` (256) until a size fails or
    ``cap`` (``VKBENCH_STEP_CAP``, default 4000 steps, the largest ``ManyVulkan``
    size, so ``VKBENCH_PTE_CACHE`` shares its programs) runs,
    then bisecting: about log2(limit) probes, each lowering and executing
    ``Many(n)`` in a fresh process with a freshly loaded method. Lowering
    dominates (super-linear in n), hence the modest default cap.

    asv reads a rising track as a regression, so the track is the number of
    steps *short of the cap*: ``cap - limit``. 0 means every size up to the cap
    ran; a larger number means the runtime gave up earlier (worse). The limit
    itself is ``cap - value``.
    """

    timeout = 7200
    number = 1
    repeat = 1

    def setup(self):
        rt.require_vulkan_runtime()
        self.cap = int(os.environ.get("VKBENCH_STEP_CAP", rt.STEP_CAP))

    def track_steps_short_of_cap(self):
        return rt.find_step_limit(self.cap).short_of_cap

    track_steps_short_of_cap.unit = "steps"


class ManyNative:
    """``Many(n)`` executed by ExecuTorch's C++ runtime (:mod:`vkbench.native`).

    For machines whose Python cannot execute programs (the H200 device: no
    torch 2.13 there) but can run the wheel's ``libexecutorch.so`` with our
    Vulkan backend library. Programs are pre-lowered (``VKBENCH_PTE_DIR``);
    the runner is ``VKBENCH_PTE_RUNNER``; without them every benchmark here
    is skipped. The runner's own clock times ``Method::execute`` (median of
    10 after a warm-up), so these are tracks in seconds, not asv timings of
    a subprocess. A size that fails is recorded in the cache and skipped.
    """

    params = SIZES
    param_names = ["n"]
    timeout = 1800

    def setup_cache(self):
        try:
            native.require_native()
        except NotImplementedError as error:
            return {"skip": str(error)}
        return {"probes": {n: native.run_many(n).to_json() for n in SIZES}}

    def setup(self, cache, n):
        if "skip" in cache:
            raise NotImplementedError(cache["skip"])
        probe = cache["probes"][n]
        if not probe["ok"]:
            raise NotImplementedError(f"Many({n}) does not execute: {probe['stage']}: {probe['error']}")

    def track_execute(self, cache, n):
        return cache["probes"][n]["seconds"]["execute"]

    track_execute.unit = "seconds"

    def track_us_per_dispatch(self, cache, n):
        return cache["probes"][n]["seconds"]["execute"] / (2 * n) * 1e6

    track_us_per_dispatch.unit = "us"

    def track_max_abs_diff(self, cache, n):
        return cache["probes"][n]["max_abs_diff"]

    track_max_abs_diff.unit = "abs diff"


class StepLimitNative:
    """:class:`StepLimit` through the C++ runner over pre-lowered programs.

    The search visits the sizes the Python-runtime search visits for the same
    outcomes (``python -m vkbench.runtime limit`` with ``VKBENCH_PTE_CACHE``
    lowers them); a size nobody lowered stops it with an error rather than
    counting as a failure.
    """

    timeout = 1800
    number = 1
    repeat = 1

    def setup(self):
        native.require_native()
        self.cap = int(os.environ.get("VKBENCH_STEP_CAP", rt.STEP_CAP))

    def track_steps_short_of_cap(self):
        return native.find_native_step_limit(self.cap, rt.STEP_START).short_of_cap

    track_steps_short_of_cap.unit = "steps"
