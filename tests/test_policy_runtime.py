"""Policy entries on the runtime: lowering per backend, the benchmark's skips, real runs.

CI has the PyPI executorch 1.5.1 wheel with torch 2.11, whose runtime cannot
execute any program ("tensor does not have a device") and has no Vulkan
backend: there the tests check that lowering for XNNPACK and portable makes
real programs and that the benchmark skips with the reason, cheaply (nothing
is lowered when no runtime backend is ready). Where the runtime executes
programs (a ``python -m vkbench.build full`` venv with torch 2.13), the
smallest entry, ``tdmpc/pi``, runs on every ready backend and must match eager.
"""

from __future__ import annotations

import math
import subprocess

import pytest
import torch

from vkbench import policy_runtime as pr
from vkbench.lowering import NO_PARTITIONER, lower

ENTRY = "tdmpc/pi"  # the smallest entry: 21 compute nodes
EXECUTES, EXECUTES_REASON = pr.executes_programs()
READY = {backend: pr.runtime_ready(backend) for backend in pr.BACKENDS}
needs_no_runtime = pytest.mark.skipif(
    any(ok for ok, _ in READY.values()), reason="a runtime backend is ready here: nothing to skip"
)
needs_runtime = pytest.mark.skipif(
    not READY["xnnpack"][0] or not READY["portable"][0],
    reason=f"the runtime cannot run xnnpack/portable programs here ({READY['xnnpack'][1]})",
)


@pytest.fixture(scope="module")
def pi():
    from vkbench.policies import ENTRIES

    return ENTRIES[ENTRY].build()


# ----------------------------------------------------------------- lowering (everywhere)


def test_lower_for_xnnpack_delegates_to_xnnpack(pi):
    module, inputs = pi
    coverage, program = lower(module, inputs, backend="xnnpack", keep_program=True)
    pte = bytes(program.buffer)
    assert coverage.vulkan_programs >= 1  # XNNPACK delegate calls
    assert 0 < coverage.nodes_delegated <= coverage.nodes_total
    assert coverage.program_bytes == len(pte)
    assert pte[4:8] == b"ET12"  # the ExecuTorch flatbuffer file identifier
    assert b"XnnpackBackend" in pte and b"VulkanBackend" not in pte


def test_lower_for_portable_delegates_nothing(pi):
    module, inputs = pi
    coverage, program = lower(module, inputs, backend="portable", keep_program=True)
    pte = bytes(program.buffer)
    assert pte[4:8] == b"ET12"
    assert b"XnnpackBackend" not in pte and b"VulkanBackend" not in pte
    assert coverage.vulkan_programs == 0 and coverage.nodes_delegated == 0
    assert coverage.nodes_cpu == coverage.nodes_total > 0
    assert all(node.reasons == [NO_PARTITIONER] for node in coverage.cpu_nodes)
    assert "aten.addmm.default" in coverage.cpu_ops


def test_lower_rejects_unknown_backend_and_portable_options(pi):
    module, inputs = pi
    with pytest.raises(ValueError, match="unknown backend 'metal'"):
        lower(module, inputs, backend="metal")
    with pytest.raises(ValueError, match="portable backend has no partitioner"):
        lower(module, inputs, backend="portable", partitioner_options={"texture_limits": (4096,) * 3})


def test_compare_takes_float_outputs_and_checks_shapes():
    expected = (torch.tensor([1.0, 2.0]), {"mask": torch.tensor([1, 0])})
    worst, count = pr.compare([torch.tensor([1.0, 2.5]), torch.tensor([7, 7])], expected)
    assert (worst, count) == (0.5, 1)  # the int output is not compared
    with pytest.raises(ValueError, match="shape"):
        pr.compare([torch.zeros(3), torch.zeros(2)], expected)
    with pytest.raises(ValueError, match="1 tensor outputs, eager has 2"):
        pr.compare([torch.zeros(2)], expected)


def test_isolated_run_keeps_finished_backends_and_records_the_crash(monkeypatch):
    finished = pr.Run(ENTRY, "eager", ok=True, forward_ms=1.0, max_abs_diff=0.0)

    def crashed(command, **_):
        assert command[1:4] == ["-m", "vkbench.policy_runtime", ENTRY]
        stdout = "lerobot chatter\n" + __import__("json").dumps(finished.to_json()) + "\n"
        stderr = "terminate called\nVK_ERROR_DEVICE_LOST in Adapter.cpp\n"
        return subprocess.CompletedProcess(command, -6, stdout=stdout, stderr=stderr)

    monkeypatch.setattr(pr.subprocess, "run", crashed)
    eager, vulkan = pr.measure_isolated(ENTRY, ["eager", "vulkan"])
    assert eager == finished
    assert not vulkan.ok and vulkan.stage == "crash"
    assert "exit -6" in vulkan.error and "VK_ERROR_DEVICE_LOST" in vulkan.error


def test_benchmark_shape(load_benchmark):
    bench = load_benchmark("bench_policy_runtime")
    cls = bench.PolicyRuntime
    assert cls.params == [bench.ENTRIES, ["eager", "vulkan", "xnnpack", "portable"]]
    assert cls.param_names == ["entry", "backend"]
    assert cls.timeout >= 600 and cls.setup_cache.timeout >= cls.timeout
    assert set(bench.ENTRIES) <= set(pr.DEFAULT_ENTRIES)
    assert cls.track_max_abs_diff.unit


def test_failed_run_is_a_skip_with_its_stage(load_benchmark):
    bench = load_benchmark("bench_policy_runtime")
    failed = pr.Run(ENTRY, "vulkan").fail("partition", "AttributeError: no shape")
    cache = {"runs": {ENTRY: {"vulkan": failed.to_json()}}, "pte": {ENTRY: {}}}
    with pytest.raises(NotImplementedError, match="tdmpc/pi on vulkan: partition: AttributeError: no shape"):
        bench.PolicyRuntime().setup(cache, ENTRY, "vulkan")
    assert math.isnan(bench.PolicyRuntime().track_max_abs_diff(cache, ENTRY, "vulkan"))


# ----------------------------------------------------------------- a runtime that cannot execute (CI)


@pytest.mark.skipif(EXECUTES, reason="this runtime executes programs")
def test_runtime_that_cannot_execute_says_why():
    assert "cannot execute programs" in EXECUTES_REASON or "unavailable" in EXECUTES_REASON
    for backend in ("xnnpack", "portable"):
        assert READY[backend] == (False, EXECUTES_REASON)


@needs_no_runtime
def test_benchmark_skips_cleanly_with_the_reason(load_benchmark):
    bench = load_benchmark("bench_policy_runtime")
    cache = bench.PolicyRuntime().setup_cache()  # lowers nothing: no backend is ready
    assert cache["pte"] == {entry: {} for entry in bench.ENTRIES}
    for backend in bench.RUNTIME_BACKENDS:
        reason = READY[backend][1]
        run = cache["runs"][ENTRY][backend]
        assert (run["ok"], run["stage"], run["error"]) == (False, "runtime", reason)
        with pytest.raises(NotImplementedError, match=f"{ENTRY} on {backend}: runtime: ") as raised:
            bench.PolicyRuntime().setup(cache, ENTRY, backend)
        assert reason in str(raised.value)
    # The eager baseline needs no runtime and still runs.
    eager = bench.PolicyRuntime()
    eager.setup(cache, ENTRY, "eager")
    eager.time_forward(cache, ENTRY, "eager")
    assert eager.track_max_abs_diff(cache, ENTRY, "eager") == 0.0


# ----------------------------------------------------------------- a runtime that executes


@needs_runtime
def test_entry_runs_on_every_ready_backend_and_matches_eager():
    backends = ["eager"] + [b for b in pr.BACKENDS if READY[b][0]]
    runs = pr.measure(ENTRY, backends)
    for run in runs:
        assert run.ok, f"{run.backend}: {run.stage}: {run.error}"
        assert run.forward_ms is not None and run.forward_ms > 0 and run.repeats >= pr.timing()["min_repeats"]
        assert run.max_abs_diff is not None and run.max_abs_diff < 1e-4
        assert run.float_outputs == 1
    delegates = {run.backend: run.delegate_calls for run in runs}
    assert delegates["portable"] == 0 and delegates["xnnpack"] >= 1
    for backend in pr.BACKENDS:
        if not READY[backend][0]:
            assert pr.measure(ENTRY, [backend])[0].stage == "runtime"


@needs_runtime
def test_benchmark_times_a_loaded_program(load_benchmark):
    bench = load_benchmark("bench_policy_runtime")
    cache = bench.measure_all([ENTRY], ["portable"])
    assert cache["runs"][ENTRY]["portable"]["ok"], cache["runs"][ENTRY]["portable"]
    assert cache["pte"][ENTRY]["portable"][4:8] == b"ET12"
    bench_run = bench.PolicyRuntime()
    bench_run.setup(cache, ENTRY, "portable")
    bench_run.time_forward(cache, ENTRY, "portable")
    assert bench_run.track_max_abs_diff(cache, ENTRY, "portable") < 1e-4
