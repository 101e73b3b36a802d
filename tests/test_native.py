"""The C++ runner path (:mod:`vkbench.native`) and its asv classes.

CI has the PyPI wheel: its headers and ``libexecutorch.so`` are enough to
build the runner (linked here with the wheel's XNNPACK backend and optimized
kernel libraries, since there is no Vulkan one). A broken program must come
back as a failed probe, not a crash, and a policy entry lowered for XNNPACK
and for portable kernels must run natively and match eager PyTorch — the
runner needs no torch, so this runs even where the wheel's Python runtime
cannot execute anything. Executing ``Many(n)`` on Vulkan needs a build from
``python -m vkbench.build full`` and a Vulkan device; that test skips
elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vkbench import native
from vkbench import runtime as rt

executorch = pytest.importorskip("executorch")
ET_DIR = Path(list(executorch.__path__)[0])
REGISTERED, REASON = rt.vulkan_registered()


@pytest.fixture(scope="module")
def wheel_runner(tmp_path_factory) -> Path:
    """pte_runner built against the installed wheel (XNNPACK as the linked backend)."""
    libraries = [ET_DIR / "lib" / name for name in
                 ("libexecutorch_backend_xnnpack.so", "libexecutorch_kernels_optimized.so")]
    if not (ET_DIR / "include").is_dir() or not all(lib.exists() for lib in libraries):
        pytest.skip("this executorch has no C++ headers, XNNPACK or kernel library")
    return native.build_runner(tmp_path_factory.mktemp("runner"), [str(lib) for lib in libraries], ET_DIR)


def test_native_benchmarks_skip_without_a_runner(load_benchmark, monkeypatch):
    monkeypatch.delenv(native.RUNNER_ENV, raising=False)
    monkeypatch.delenv(native.PTE_DIR_ENV, raising=False)
    bench = load_benchmark("bench_runtime")
    many = bench.ManyNative()
    cache = many.setup_cache()
    assert native.RUNNER_ENV in cache["skip"]
    with pytest.raises(NotImplementedError, match=native.RUNNER_ENV):
        many.setup(cache, 500)
    with pytest.raises(NotImplementedError, match=native.RUNNER_ENV):
        bench.StepLimitNative().setup()


def test_find_pte_exact_name_then_cache_key(tmp_path):
    assert native.find_pte(7, tmp_path) is None
    keyed = tmp_path / "many_7_et1.5.1_torch2.13.0_tex4096x4096x4096.pte"
    keyed.write_bytes(b"x")
    (tmp_path / "many_70_et1.pte").write_bytes(b"x")
    assert native.find_pte(7, tmp_path) == keyed
    exact = tmp_path / "many_7.pte"
    exact.write_bytes(b"x")
    assert native.find_pte(7, tmp_path) == exact


def test_limit_search_stops_on_a_program_nobody_lowered(monkeypatch, tmp_path):
    """A missing .pte must not be read as 'the runtime gave up there'."""
    for n in (256, 512):
        (tmp_path / f"many_{n}.pte").write_bytes(b"x")
    runner = tmp_path / "pte_runner"
    runner.write_text("")
    monkeypatch.setenv(native.RUNNER_ENV, str(runner))
    monkeypatch.setenv(native.PTE_DIR_ENV, str(tmp_path))
    ran: list[int] = []

    def run(n, repeats=native.REPEATS, timeout=native.RUN_TIMEOUT):
        if native.find_pte(n) is None:
            return rt.Probe(n, stage="missing", error="no pte")
        ran.append(n)
        return rt.Probe(n, ok=True, max_abs_diff=0.0)

    monkeypatch.setattr(native, "run_many", run)
    with pytest.raises(native.MissingProgram):
        native.find_native_step_limit(4000, 256)
    assert ran == [256, 512]


def test_runner_builds_from_the_wheel_and_reports_a_bad_program(wheel_runner, monkeypatch, tmp_path):
    assert wheel_runner.exists() and (wheel_runner.parent / "libexecutorch.so").exists()
    (tmp_path / "many_5.pte").write_bytes(b"not a program")
    monkeypatch.setenv(native.RUNNER_ENV, str(wheel_runner))
    monkeypatch.setenv(native.PTE_DIR_ENV, str(tmp_path))
    probe = native.run_many(5, repeats=1)
    assert not probe.ok
    assert probe.stage == "load" and "Program::load failed" in probe.error
    assert native.run_many(6).stage == "missing"


@pytest.mark.skipif(not (REGISTERED and rt.vulkan_devices()["available"]),
                    reason=f"needs a Vulkan runtime build and device ({REASON})")
def test_many_runs_natively_on_vulkan(monkeypatch, tmp_path):
    backend = ET_DIR / "lib" / "libexecutorch_backend_vulkan.so"
    runner = native.build_runner(tmp_path / "runner", backend, ET_DIR)
    lowered = rt.probe_many_isolated(40, save=tmp_path / "many_40.pte")
    assert lowered.ok, lowered.error
    monkeypatch.setenv(native.RUNNER_ENV, str(runner))
    monkeypatch.setenv(native.PTE_DIR_ENV, str(tmp_path))
    probe = native.run_many(40, repeats=3)
    assert probe.ok, probe.error
    assert probe.max_abs_diff < 1e-4
    assert 0 < probe.seconds["execute_min"] <= probe.seconds["execute"]


def test_record_refuses_an_unknown_release():
    from vkbench.ledger import recorded_release

    with pytest.raises(SystemExit, match="not in ledger.json"):
        recorded_release("0.0.0+nothing")


def test_policy_runs_natively_and_matches_eager(wheel_runner, monkeypatch, tmp_path):
    from vkbench.native import policies as native_policies

    manifest = native_policies.export_policy_io(["tdmpc/pi"], tmp_path, backends=("xnnpack", "portable"))
    assert all(run["ok"] for run in manifest["tdmpc/pi"]["backends"].values()), manifest
    monkeypatch.setenv(native.RUNNER_ENV, str(wheel_runner))
    for backend in ("xnnpack", "portable"):
        run = native_policies.run_policy("tdmpc/pi", backend, folder=tmp_path, repeats=2)
        assert run["ok"], run
        assert run["max_abs_diff"] < 1e-4
        assert 0 < run["forward_min_s"] <= run["forward_s"]
    missing = native_policies.run_policy("tdmpc/pi", "vulkan", folder=tmp_path)
    assert not missing["ok"] and missing["stage"] == "missing"
