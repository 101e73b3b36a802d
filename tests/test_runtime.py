"""Runtime benchmarks and the Vulkan runtime status helper.

On the PyPI wheel (CI) there is no Vulkan runtime: the benchmarks must skip
cleanly (``NotImplementedError`` with the reason) and the status helper must
say so. Tests that execute on Vulkan run only where a build from
``python -m vkbench.build full`` is the active ``executorch`` and a Vulkan
device is present; they never need a fetched snapshot.
"""

from __future__ import annotations

import math
import subprocess

import pytest

from vkbench import runtime as rt

REGISTERED, REASON = rt.vulkan_registered()
needs_vulkan = pytest.mark.skipif(
    not (REGISTERED and rt.vulkan_devices()["available"]),
    reason=f"needs a Vulkan runtime build and device ({REASON})",
)
needs_no_vulkan = pytest.mark.skipif(REGISTERED, reason="this executorch has a Vulkan runtime")


# ----------------------------------------------------------------- PyPI wheel (CI)


@needs_no_vulkan
def test_status_says_no_vulkan_runtime():
    status = rt.vulkan_runtime_status()
    assert status["vulkan_backend_registered"] is False
    assert status["runnable"] is False
    assert "VulkanBackend is not registered" in status["reason"]
    assert "vkbench.build full" in status["reason"]
    assert "VulkanBackend" not in status["backends"]
    assert set(status) >= {"vulkan_device_present", "vulkan_devices", "vulkaninfo", "executorch"}


@needs_no_vulkan
def test_require_raises_not_implemented_with_reason():
    with pytest.raises(NotImplementedError, match="VulkanBackend is not registered"):
        rt.require_vulkan_runtime()


@needs_no_vulkan
def test_benchmarks_skip_cleanly(load_benchmark):
    bench = load_benchmark("bench_runtime")
    many = bench.ManyVulkan()
    cache = many.setup_cache()
    assert cache == {"skip": REASON}
    for n in bench.ManyVulkan.params:
        with pytest.raises(NotImplementedError, match="VulkanBackend is not registered"):
            many.setup(cache, n)
    with pytest.raises(NotImplementedError, match="VulkanBackend is not registered"):
        bench.StepLimit().setup()


@needs_no_vulkan
def test_load_method_refuses_without_vulkan():
    with pytest.raises(NotImplementedError):
        rt.load_method(b"")


# ----------------------------------------------------------------- everywhere


def test_benchmark_shape(load_benchmark):
    bench = load_benchmark("bench_runtime")
    assert bench.ManyVulkan.params == [500, 1000, 1500, 2000, 4000]
    assert bench.ManyVulkan.track_max_abs_diff.unit
    assert bench.StepLimit.track_steps_short_of_cap.unit == "steps"


def test_failed_size_is_recorded_not_raised(load_benchmark):
    bench = load_benchmark("bench_runtime")
    cache = {
        "probes": {7: rt.Probe(7, stage="execute", error="RuntimeError: QueryPool").to_json()},
        "pte": {},
    }
    assert math.isnan(bench.ManyVulkan().track_max_abs_diff(cache, 7))
    with pytest.raises(
        NotImplementedError, match="Many\\(7\\) does not execute: execute: RuntimeError: QueryPool"
    ):
        bench.ManyVulkan().setup(cache, 7)


def test_texture_limits_from_env(monkeypatch):
    monkeypatch.setenv("VKBENCH_TEXTURE_LIMITS", "4096,4096,2048")
    assert rt.texture_limits() == (4096, 4096, 2048)
    assert rt.partitioner_options() == {"texture_limits": (4096, 4096, 2048)}
    monkeypatch.setenv("VKBENCH_TEXTURE_LIMITS", "4096")
    assert rt.texture_limits() == (4096, 4096, 4096)
    monkeypatch.setenv("VKBENCH_TEXTURE_LIMITS", "1,2")
    with pytest.raises(ValueError):
        rt.texture_limits()


def test_texture_limits_from_device(monkeypatch):
    monkeypatch.delenv("VKBENCH_TEXTURE_LIMITS", raising=False)
    monkeypatch.setattr(rt, "device_max_image_3d", lambda: 4096)
    assert rt.texture_limits() == (4096, 4096, 4096)
    monkeypatch.setattr(rt, "device_max_image_3d", lambda: 16384)
    assert rt.texture_limits() is None
    monkeypatch.setattr(rt, "device_max_image_3d", lambda: None)
    assert rt.partitioner_options() == {}


@pytest.mark.parametrize("limit", [0, 1, 300, 777, 1023, 4096, 5000])
def test_step_limit_search(monkeypatch, limit):
    seen: list[int] = []

    def fake(n, **_):
        seen.append(n)
        return rt.Probe(n, ok=n <= limit, max_abs_diff=0.0)

    monkeypatch.setattr(rt, "probe_many", fake)
    result = rt.find_step_limit(4096, start=256, isolated=False)
    assert result.limit == min(limit, 4096)
    assert result.short_of_cap == 4096 - min(limit, 4096)
    assert len(seen) == len(set(seen)) <= 2 * 12 + 1
    if limit < 4096:
        assert result.first_failure is not None and result.first_failure.n == result.limit + 1


def test_step_limit_resolution(monkeypatch):
    monkeypatch.setattr(rt, "probe_many", lambda n, **_: rt.Probe(n, ok=n <= 777))
    result = rt.find_step_limit(4096, start=512, resolution=16, isolated=False)
    assert 777 - 15 <= result.limit <= 777


def test_isolated_probe_records_a_crash(monkeypatch):
    def crashed(command, **_):
        stderr = "terminate called\nQueryPool.cpp:79: (num_queries_ < config_.max_query_count) is false!\n"
        return subprocess.CompletedProcess(command, -6, stdout="", stderr=stderr)

    monkeypatch.setattr(rt.subprocess, "run", crashed)
    probe = rt.probe_many_isolated(1500)
    assert not probe.ok and probe.stage == "crash"
    assert "QueryPool.cpp:79" in probe.error and "exit -6" in probe.error


def test_vulkan_devices_shape():
    info = rt.vulkan_devices()
    assert set(info) >= {"vulkaninfo", "available", "devices"}
    assert info["available"] in (True, False, None)


# ----------------------------------------------------------------- Vulkan build only


@needs_vulkan
def test_many_runs_on_vulkan_and_matches_eager():
    probe = rt.probe_many(50)
    assert probe.ok, probe.error
    assert probe.vulkan_programs == 1 and probe.cpu_nodes == 0
    assert probe.max_abs_diff < 1e-4


@needs_vulkan
def test_isolated_probe_on_vulkan(tmp_path):
    probe = rt.probe_many_isolated(20, save=tmp_path / "m.pte")
    assert probe.ok, probe.error
    method = rt.load_method((tmp_path / "m.pte").read_bytes())
    x = rt.many_input()
    assert rt.max_abs_diff(method.execute([x])[0], rt.many_eager(20, x)) < 1e-4


def test_pte_cache_is_reused(monkeypatch, tmp_path):
    monkeypatch.setenv("VKBENCH_PTE_CACHE", str(tmp_path))
    monkeypatch.setenv("VKBENCH_TEXTURE_LIMITS", "4096")
    path = rt._pte_cache_path(12)
    assert path is not None and path.parent == tmp_path and "tex4096x4096x4096" in path.name
    path.write_bytes(b"PTE")
    assert rt.lower_many(12) == (None, b"PTE")
    monkeypatch.delenv("VKBENCH_PTE_CACHE")
    assert rt._pte_cache_path(12) is None
