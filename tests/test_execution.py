"""The execution layer: outcomes, bundles, both runners, the child protocol, the asv classes.

CI has the PyPI wheel: no Vulkan runtime, and a Python runtime that cannot
execute programs with torch 2.11. So the runtime benchmarks must skip with
the reason and lower nothing, while the C++ runner — built here from the
wheel's headers and ``libexecutorch.so`` with its XNNPACK and optimized
kernel libraries — executes real programs (a policy entry lowered for
XNNPACK and for portable kernels) and matches eager PyTorch. A Vulkan
program loaded by that runner stops at ``load`` (no Vulkan backend linked):
the ladder's "lowered" rung. Executing on Vulkan needs a build from
``vkbench build full`` and a device; those tests skip elsewhere.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from vkbench import settings
from vkbench.execution import bundle as bundles
from vkbench.execution import device, legacy, measure, record, runners, step_limit
from vkbench.execution.outcome import LADDER, SCHEMA, Outcome, compare

#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")

executorch = pytest.importorskip("executorch")
ET_DIR = Path(list(executorch.__path__)[0])
ROOT = Path(__file__).resolve().parent.parent
ENTRY = "tdmpc/pi"  # the smallest policy entry: 21 compute nodes
REGISTERED, REASON = device.vulkan_registered()
HAS_VULKAN = REGISTERED and bool(device.vulkan_devices()["available"])
needs_vulkan = pytest.mark.skipif(
    not HAS_VULKAN, reason=f"needs a Vulkan runtime build and device ({REASON})"
)
needs_no_vulkan = pytest.mark.skipif(REGISTERED, reason="this executorch has a Vulkan runtime")
PYTHON_EXECUTES, PYTHON_REASON = runners.executes_programs()


@pytest.fixture(scope="module")
def wheel_runner(tmp_path_factory) -> Path:
    """pte_runner built against the installed wheel (XNNPACK and optimized kernels linked)."""
    libraries = [
        ET_DIR / "lib" / name
        for name in ("libexecutorch_backend_xnnpack.so", "libexecutorch_kernels_optimized.so")
    ]
    if not (ET_DIR / "include").is_dir() or not all(lib.exists() for lib in libraries):
        pytest.skip("this executorch has no C++ headers, XNNPACK or kernel library")
    return runners.build_runner(tmp_path_factory.mktemp("runner"), [str(lib) for lib in libraries], ET_DIR)


@pytest.fixture(scope="module")
def pi_bundle() -> bundles.Bundle:
    return bundles.prepare(ENTRY, ["vulkan", "xnnpack", "portable"])


# ----------------------------------------------------------------- the result type


def test_outcome_json_round_trip_and_ladder():
    outcome = Outcome(
        "many/5", "vulkan", "native", ok=True, execute_s=0.01, max_abs_diff=0.0, snr_db=math.inf
    )
    data = outcome.to_json()
    assert data["schema"] == SCHEMA
    assert Outcome.from_json(json.loads(json.dumps(data))) == outcome
    assert outcome.reached == "matches" and outcome.rungs_short == 0
    assert Outcome("w", "vulkan", "python", ok=True, snr_db=12.0).reached == "runs"
    assert Outcome("w", "vulkan", "python").fail("execute", "VK_ERROR").reached == "loads"
    assert Outcome("w", "vulkan", "python").fail("load", "isTensorRef").reached == "lowered"
    blocked = Outcome("w", "vulkan", "python").fail("to_edge", "not Core ATen")
    assert blocked.reached == "" and blocked.rungs_short == len(LADDER)
    with pytest.raises(ValueError, match="unknown outcome schema"):
        Outcome.from_json({"schema": 99})


def test_outcome_reads_the_forms_written_before_the_schema():
    probe = {
        "n": 1500,
        "ok": False,
        "stage": "execute",
        "error": "QueryPool",
        "max_abs_diff": math.nan,
        "vulkan_programs": 1,
        "cpu_nodes": 0,
        "seconds": {"lower": 3.0, "load": 0.2},
    }
    old = Outcome.from_json(probe)
    assert (old.workload, old.runner, old.stage, old.reached) == ("many/1500", "python", "execute", "loads")
    native = Outcome.from_json(
        {
            "n": 500,
            "ok": True,
            "max_abs_diff": 0.0,
            "vulkan_programs": -1,
            "seconds": {"load": 0.3, "execute": 0.005, "execute_min": 0.004},
        }
    )
    assert (native.runner, native.execute_s, native.execute_min_s) == ("native", 0.005, 0.004)
    run = Outcome.from_json(
        {
            "entry": ENTRY,
            "backend": "xnnpack",
            "ok": True,
            "forward_ms": 2.5,
            "forward_ms_min": 2.0,
            "repeats": 7,
            "max_abs_diff": 1e-7,
        }
    )
    assert (run.execute_s, run.execute_min_s, run.repeats) == (0.0025, 0.002, 7)


def test_compare_takes_float_outputs_and_checks_sizes():
    worst, snr, count = compare(
        [np.array([1.0, 2.5]), np.array([7, 7])], [np.array([1.0, 2.0]), np.array([1, 0])]
    )
    assert (worst, count) == (0.5, 1)  # the int output is not compared
    assert snr == pytest.approx(10 * math.log10(5 / 0.25))
    assert compare([np.ones(3)], [np.ones(3)])[1] == math.inf
    with pytest.raises(ValueError, match="3 values, eager has 2"):
        compare([np.zeros(3)], [np.zeros(2)])
    with pytest.raises(ValueError, match="1 tensor outputs, eager has 2"):
        compare([np.zeros(2)], [np.zeros(2), np.zeros(2)])


def test_a_nan_output_is_infinitely_far_from_eager():
    """group_norm_3d on Vulkan returns NaN everywhere: that must not read as "max abs diff 0"."""
    worst, snr, _ = compare([np.array([0.0, np.nan]), np.ones(2)], [np.zeros(2), np.ones(2)])
    assert worst == math.inf and snr == -math.inf


# ----------------------------------------------------------------- device and step limit


@needs_no_vulkan
def test_status_says_no_vulkan_runtime():
    status = device.vulkan_runtime_status()
    assert status["vulkan_backend_registered"] is False and status["runnable"] is False
    assert "VulkanBackend is not registered" in status["reason"] and "vkbench build full" in status["reason"]
    assert set(status) >= {"vulkan_device_present", "vulkan_devices", "vulkaninfo", "executorch"}
    assert runners.PythonRunner().ready("vulkan") == (False, status["reason"])


def test_texture_limits_from_env_and_device(monkeypatch):
    monkeypatch.setenv("VKBENCH_TEXTURE_LIMITS", "4096,4096,2048")
    assert device.partitioner_options() == {"texture_limits": (4096, 4096, 2048)}
    monkeypatch.setenv("VKBENCH_TEXTURE_LIMITS", "1,2")
    with pytest.raises(ValueError):
        device.texture_limits()
    monkeypatch.delenv("VKBENCH_TEXTURE_LIMITS")
    monkeypatch.setattr(device, "device_max_image_3d", lambda: 4096)
    assert device.texture_limits() == (4096, 4096, 4096)
    monkeypatch.setattr(device, "device_max_image_3d", lambda: 16384)
    assert device.partitioner_options() == {}


@pytest.mark.parametrize("limit", [0, 1, 300, 1023, 4096, 5000])
def test_step_limit_search(limit):
    seen: list[int] = []

    def probe(n: int) -> Outcome:
        seen.append(n)
        outcome = Outcome(f"many/{n}", "vulkan", "python", ok=n <= limit)
        return outcome if outcome.ok else outcome.fail("execute", "QueryPool")

    result = step_limit.find_step_limit(probe, 4096, start=256)
    assert result.limit == min(limit, 4096) and result.short_of_cap == 4096 - min(limit, 4096)
    assert len(seen) == len(set(seen)) <= 2 * 12 + 1
    if limit < 4096:
        assert step_limit.steps(result.first_failure) == result.limit + 1


def test_step_limit_stops_on_a_probe_that_never_executed():
    """No runtime, or a size nobody lowered, must not read as 'the runtime gave up there'."""

    def probe(n: int) -> Outcome:
        outcome = Outcome(f"many/{n}", "vulkan", "native", ok=n <= 256)
        return outcome if outcome.ok else outcome.fail("runtime", "no C++ runner")

    with pytest.raises(step_limit.NotLowered, match="Many\\(512\\) never executed: runtime"):
        step_limit.find_step_limit(probe, 4000, start=256)


# ----------------------------------------------------------------- bundles


def test_bundle_lowers_every_backend_and_round_trips(pi_bundle, tmp_path):
    assert set(pi_bundle.programs) == {"vulkan", "xnnpack", "portable"}
    assert all(o.ok and o.reached == "lowered" for o in pi_bundle.lowering.values())  # lowered, not yet run
    assert pi_bundle.lowering["portable"].delegate_calls == 0
    assert (
        pi_bundle.lowering["xnnpack"].delegate_calls >= 1 and pi_bundle.lowering["vulkan"].delegate_calls >= 1
    )
    assert all(pte[4:8] == b"ET12" for pte in pi_bundle.programs.values())
    folder = pi_bundle.save(tmp_path)
    assert folder.name == "tdmpc__pi"
    loaded = bundles.Bundle.load(tmp_path, ENTRY)
    assert loaded.programs == pi_bundle.programs and loaded.toolchain == pi_bundle.toolchain
    assert all(np.array_equal(a, b) for a, b in zip(loaded.expected, pi_bundle.expected, strict=True))
    assert bundles.Bundle.load(tmp_path, "many/3") is None


def test_saved_bundles_are_reused_by_the_same_toolchain_only(monkeypatch, tmp_path):
    monkeypatch.setenv("VKBENCH_BUNDLES", str(tmp_path))
    first = bundles.prepare("many/3", ["portable"])
    assert (tmp_path / "many__3" / "portable.pte").is_file()
    (tmp_path / "many__3" / "portable.pte").write_bytes(b"marked")
    assert bundles.prepare("many/3", ["portable"]).programs["portable"] == b"marked"
    manifest = tmp_path / "many__3" / bundles.MANIFEST
    manifest.write_text(manifest.read_text().replace(first.toolchain, "another-toolchain"))
    assert bundles.prepare("many/3", ["portable"]).programs["portable"] == first.programs["portable"]


def test_a_machine_that_cannot_lower_says_the_bundle_is_missing(monkeypatch, tmp_path):
    """The device machine has no executorch: an entry nobody carried there is missing, not blocked."""
    monkeypatch.setattr(bundles, "toolchain", lambda: "")
    monkeypatch.setenv("VKBENCH_BUNDLES", str(tmp_path))
    missing = bundles.prepare(ENTRY, ["vulkan"])
    assert (
        missing.lowering["vulkan"].stage == bundles.MISSING
        and "no saved bundle" in missing.lowering["vulkan"].error
    )
    cache = {"outcomes": {record.key(ENTRY, "vulkan", "native"): missing.lowering["vulkan"].to_json()}}
    with pytest.raises(NotImplementedError, match="no saved bundle"):
        record.rungs_short(cache, ENTRY, "vulkan", "native")


def test_a_failed_build_fails_every_backend():
    failed = bundles.prepare("no/such-entry", ["vulkan", "portable"])
    assert not failed.programs
    assert {o.stage for o in failed.lowering.values()} == {"build"}
    assert "neither many/<n>, probe/<name> nor a policy entry" in failed.lowering["vulkan"].error


def test_a_program_with_nothing_on_vulkan_did_not_lower_for_vulkan():
    """An op probe as a workload: ELU has no Vulkan kernel, so running it would measure the CPU."""
    elu = bundles.prepare("probe/elu", ["vulkan"])
    assert not elu.programs
    assert elu.lowering["vulkan"].stage == "partition"
    assert "nothing delegated to vulkan: all 1 nodes on the CPU" in elu.lowering["vulkan"].error
    assert elu.lowering["vulkan"].rungs_short == 4


# ----------------------------------------------------------------- runners


@pytest.mark.skipif(PYTHON_EXECUTES, reason="this runtime executes programs")
def test_python_runner_that_cannot_execute_says_why():
    assert "cannot execute programs" in PYTHON_REASON or "unavailable" in PYTHON_REASON
    assert runners.PythonRunner().ready("portable") == (False, PYTHON_REASON)
    outcomes = measure.measure(ENTRY, ["portable"], ["python"])
    assert [(o.stage, o.error) for o in outcomes] == [("runtime", PYTHON_REASON)]
    assert outcomes[0].seconds == {}  # nothing was built or lowered


def test_native_runner_without_a_runner_says_how_to_get_one(monkeypatch):
    monkeypatch.delenv("VKBENCH_PTE_RUNNER", raising=False)
    ready, reason = runners.NativeRunner().ready("vulkan")
    assert not ready and "VKBENCH_PTE_RUNNER" in reason and "build-runner" in reason


def test_native_runner_climbs_the_ladder(wheel_runner, pi_bundle, monkeypatch):
    monkeypatch.setenv("VKBENCH_PTE_RUNNER", str(wheel_runner))
    for backend in ("xnnpack", "portable"):
        outcome = measure.execute(pi_bundle, backend, "native")
        assert outcome.ok, f"{backend}: {outcome.stage}: {outcome.error}"
        assert outcome.reached == "matches" and outcome.snr_db > 60 and outcome.max_abs_diff < 1e-4
        assert 0 < outcome.execute_min_s <= outcome.execute_s
        assert outcome.repeats == settings.integer("VKBENCH_MIN_REPEATS")
        assert outcome.float_outputs == 1 and outcome.seconds["load"] > 0
    vulkan = measure.execute(pi_bundle, "vulkan", "native")  # this runner links no Vulkan backend
    assert (vulkan.ok, vulkan.stage, vulkan.reached) == (False, "load", "lowered")
    assert vulkan.delegate_calls >= 1


def test_native_runner_reports_a_bad_program(wheel_runner):
    with pytest.raises(runners.RunFailed) as failed:
        runners.NativeRunner(wheel_runner).run(b"not a program", [np.zeros((1, 64), np.float32)])
    assert failed.value.stage == "load" and "Program::load failed" in failed.value.error


def test_a_runner_that_dies_is_placed_on_the_ladder_by_its_loaded_line(tmp_path):
    """No JSON line: before "# loaded" the program did not load, after it it did not execute."""
    for printed, stage in (("", "load"), (runners.LOADED + "\n", "execute")):
        script = tmp_path / f"dies_{stage}"
        script.write_text(f"#!/bin/sh\nprintf '{printed}'\necho 'VK_ERROR_DEVICE_LOST' >&2\nkill -6 $$\n")
        script.chmod(0o755)
        data, failure = runners.invoke_runner(script, [], timeout=30)
        assert failure[0] == stage and "crash" in failure[1] and "VK_ERROR_DEVICE_LOST" in failure[1]


def test_isolated_child_measures_for_real(wheel_runner, monkeypatch):
    monkeypatch.setenv("VKBENCH_PTE_RUNNER", str(wheel_runner))
    [outcome] = measure.measure_isolated("many/20", ["portable"], ["native"])
    assert outcome.ok, outcome.error
    assert outcome.reached == "matches" and outcome.max_abs_diff < 1e-4


def test_isolated_child_keeps_finished_outcomes_and_records_the_crash(monkeypatch):
    finished = Outcome(ENTRY, "xnnpack", "native", ok=True, execute_s=0.001, max_abs_diff=0.0)

    def crashed(command, **_):
        assert command[1:4] == ["-m", "vkbench.execution.child", ENTRY]
        stdout = "lerobot chatter\n" + json.dumps(finished.to_json()) + "\n"
        return subprocess.CompletedProcess(
            command, -6, stdout=stdout, stderr="terminate called\nVK_ERROR_DEVICE_LOST in Adapter.cpp\n"
        )

    monkeypatch.setattr(measure.subprocess, "run", crashed)
    xnnpack, vulkan = measure.measure_isolated(ENTRY, ["xnnpack", "vulkan"], ["native"])
    assert xnnpack == finished
    assert (vulkan.ok, vulkan.stage) == (False, "crash")
    assert "exit -6" in vulkan.error and "VK_ERROR_DEVICE_LOST" in vulkan.error


def test_a_crash_inside_the_python_runtime_keeps_the_lowering_and_the_stage(monkeypatch):
    """The child was the Python runner at ``load`` when it aborted: rung 'lowered'."""
    lowered = Outcome(ENTRY, "vulkan", "python", delegate_calls=6, nodes_cpu=8).fail("load", measure.PENDING)

    def crashed(command, **_):
        stdout = json.dumps(lowered.to_json()) + "\n"
        stderr = "F VulkanBackend.cpp:480] assert failed (VK_HAS_OP(op_name)): Missing operator: x\n"
        return subprocess.CompletedProcess(command, -6, stdout=stdout, stderr=stderr)

    monkeypatch.setattr(measure.subprocess, "run", crashed)
    [outcome] = measure.measure_isolated(ENTRY, ["vulkan"], ["python"])
    assert (outcome.stage, outcome.reached, outcome.rungs_short) == ("load", "lowered", 3)
    assert outcome.delegate_calls == 6
    assert outcome.error.startswith("crash: exit -6") and "Missing operator" in outcome.error


def test_measure_runs_the_in_process_runner_last_and_reports_progress(monkeypatch):
    """An abort in the Python runtime must not take the C++ runner's outcome with it."""
    bundle = bundles.Bundle(ENTRY, lowering={"vulkan": Outcome(ENTRY, "vulkan", "", ok=True)},
                            programs={"vulkan": b"pte"}, inputs=[], expected=[])
    ran, progress = [], []

    class Fake:
        def __init__(self, name):
            self.name, self.in_process = name, name == "python"

        def ready(self, backend):
            return True, ""

        def run(self, pte, inputs, loaded=None):
            ran.append(self.name)
            loaded()
            raise runners.RunFailed("execute", "boom")

    monkeypatch.setattr(measure, "prepare", lambda workload, backends, **_: bundle)
    monkeypatch.setattr(measure, "runner", Fake)
    outcomes = measure.measure(ENTRY, ["vulkan"], ["python", "native"], progress=progress.append)
    assert ran == ["native", "python"]
    assert [o.runner for o in outcomes] == ["python", "native"]
    assert [(o.runner, o.stage) for o in progress] == [("native", "load"), ("native", "execute"),
                                                       ("python", "load"), ("python", "execute")]
    assert {o.error for o in progress} == {measure.PENDING}


# ----------------------------------------------------------------- the asv classes


def test_benchmark_grids(load_benchmark):
    runtime, policy = load_benchmark("bench_runtime"), load_benchmark("bench_policy_runtime")
    assert runtime.ManyRuntime.params == [[500, 1000, 1500, 2000, 4000], ["python", "native"]]
    assert runtime.StepLimit.params == ["python", "native"]
    assert policy.PolicyRuntime.param_names == ["entry", "backend", "runner"]
    assert policy.RUNNERS == list(runners.RUNNERS) and policy.BACKENDS == list(bundles.BACKENDS)


@needs_no_vulkan
def test_benchmarks_skip_with_the_reason_and_lower_nothing(load_benchmark, monkeypatch):
    monkeypatch.delenv("VKBENCH_PTE_RUNNER", raising=False)
    bench = load_benchmark("bench_runtime")
    cache = bench.ManyRuntime().setup_cache()
    for runner in bench.RUNNERS:
        outcome = cache["outcomes"][record.key("many/500", "vulkan", runner)]
        assert outcome["stage"] == "runtime" and "lower" not in outcome["seconds"]
        with pytest.raises(NotImplementedError, match="many/500 on vulkan .* runtime: "):
            bench.ManyRuntime().setup(cache, 500, runner)
    with pytest.raises(NotImplementedError, match="VulkanBackend is not registered"):
        bench.StepLimit().setup("python")
    with pytest.raises(NotImplementedError, match="VKBENCH_PTE_RUNNER"):
        bench.StepLimit().setup("native")


def test_ladder_benchmark_measures_rungs_and_skips_only_a_missing_runner(load_benchmark):
    bench = load_benchmark("bench_policy_runtime")
    assert bench.PolicyLadder.params == [bench.FAST_ENTRIES, bench.RUNNERS]
    assert bench.VLAPolicyLadder.params == [bench.VLA_ENTRIES, bench.RUNNERS]
    outcomes = {
        ("vqbet/gpt", "python"): Outcome("vqbet/gpt", "vulkan", "python").fail("runtime", "no VulkanBackend"),
        ("act/model", "native"): Outcome("act/model", "vulkan", "native").fail("load", "isTensorRef"),
        ("pi0/prefix", "native"): Outcome("pi0/prefix", "vulkan", "native").fail("preprocess", "flatc"),
    }
    cache = {"outcomes": {record.key(e, "vulkan", r): o.to_json() for (e, r), o in outcomes.items()}}
    ladder = bench.PolicyLadder()
    with pytest.raises(NotImplementedError, match="python runner: no VulkanBackend"):
        ladder.setup(cache, "vqbet/gpt", "python")
    ladder.setup(cache, "act/model", "native")
    assert ladder.track_rungs_short(cache, "act/model", "native") == 3  # lowered, does not load
    ladder.setup(cache, "pi0/prefix", "native")
    assert ladder.track_rungs_short(cache, "pi0/prefix", "native") == 4


def test_policy_benchmark_reads_a_native_run(load_benchmark, wheel_runner, monkeypatch):
    monkeypatch.setenv("VKBENCH_PTE_RUNNER", str(wheel_runner))
    bench = load_benchmark("bench_policy_runtime")
    cache = record.record([ENTRY], ["portable"], ["native"])
    run = bench.PolicyRuntime()
    run.setup(cache, ENTRY, "portable", "native")
    assert run.track_forward_seconds(cache, ENTRY, "portable", "native") > 0
    assert run.track_max_abs_diff(cache, ENTRY, "portable", "native") < 1e-4
    eager = bench.PolicyEager()
    eager.setup(ENTRY)
    eager.time_forward(ENTRY)


def test_results_of_the_replaced_classes_move_value_for_value(tmp_path):
    suite = legacy.discover(ROOT / "benchmarks")
    columns = ["result", "params", "version", "started_at", "duration", *legacy.STAT_COLUMNS]
    sizes = [["500", "1000"]]
    old = {
        "bench_runtime.ManyVulkan.time_execute": [
            [0.1, None],
            sizes,
            "v",
            5,
            2.0,
            [0.09, None],
            [0.11, None],
        ],
        "bench_runtime.ManyNative.track_execute": [[0.05, 0.2], sizes, "v", 3, 1.0],
        "bench_runtime.StepLimitNative.track_steps_short_of_cap": [[2977], [], "v", 4, 1.0],
        "bench_policy_runtime.PolicyRuntime.time_forward": [
            [0.7, 2.0, 3.0, 4.0],
            [["'act/model'"], ["'eager'", "'vulkan'", "'xnnpack'", "'portable'"]],
            "v",
            6,
            1.0,
            [0.6, 1.9, 2.9, 3.9],
        ],
    }
    path = tmp_path / "m" / "c-existing-py3.12.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"result_columns": columns, "results": old}))
    assert legacy.migrate_file(path, suite)
    moved = {
        name: dict(zip(columns, row, strict=False))
        for name, row in json.loads(path.read_text())["results"].items()
    }
    execute = moved["bench_runtime.ManyRuntime.track_execute_seconds"]
    assert execute["result"][:4] == [0.1, 0.05, None, 0.2]  # (n, runner) in product order
    assert execute["version"] == suite["bench_runtime.ManyRuntime.track_execute_seconds"]["version"]
    assert moved["bench_runtime.ManyRuntime.track_us_per_dispatch"]["result"][0] == pytest.approx(100.0)
    assert moved["bench_runtime.StepLimit.track_steps_short_of_cap"]["result"] == [None, 2977]
    assert moved["bench_policy_runtime.PolicyEager.time_forward"]["result"][0] == 0.7
    assert moved["bench_policy_runtime.PolicyEager.time_forward"]["stats_ci_99_a"][0] == 0.6
    forward = moved["bench_policy_runtime.PolicyRuntime.track_forward_seconds"]["result"]
    assert forward[:6] == [2.0, None, 3.0, None, 4.0, None]  # act/model: (backend, runner)
    assert not any(
        name.startswith(("bench_runtime.ManyVulkan", "bench_runtime.ManyNative")) for name in moved
    )
    assert not legacy.migrate_file(path, suite)  # nothing left to move


def test_committed_runtime_results_use_the_current_benchmarks():
    """Every runtime row names a current benchmark, with the listing's version or a suite digest.

    Since the suite digest (``suite-…``, :mod:`vkbench.suite.identity`) rows of two suites coexist
    (asv keeps them apart as two series); a row with another asv source hash is a retired shape."""
    from vkbench.suite.identity import carries_digest

    listing = json.loads((ROOT / "results" / "releases" / "benchmarks.json").read_text())
    for path in (ROOT / "results" / "releases").glob("*/*-existing-py3.12.json"):
        data = json.loads(path.read_text())
        for name, row in data["results"].items():
            if name.startswith(("bench_runtime.", "bench_policy_runtime.")):
                assert name in listing, f"{path.parent.name}: {name} is not a current benchmark"
                assert row[2] == listing[name]["version"] or carries_digest(row[2]), \
                    f"{path.parent.name}: {name} has an old version"


# ----------------------------------------------------------------- Vulkan build only


@needs_vulkan
def test_many_runs_on_vulkan_with_the_python_runtime_and_matches_eager():
    [outcome] = measure.measure("many/50", ["vulkan"], ["python"])
    assert outcome.ok, outcome.error
    assert outcome.delegate_calls == 1 and outcome.nodes_cpu == 0 and outcome.reached == "matches"


@needs_vulkan
def test_many_runs_on_vulkan_with_the_native_runner(tmp_path, monkeypatch):
    runner = runners.build_runner(
        tmp_path / "runner", [str(ET_DIR / "lib" / "libexecutorch_backend_vulkan.so")], ET_DIR
    )
    monkeypatch.setenv("VKBENCH_PTE_RUNNER", str(runner))
    [outcome] = measure.measure_isolated("many/40", ["vulkan"], ["native"])
    assert outcome.ok, outcome.error
    assert outcome.max_abs_diff < 1e-4
