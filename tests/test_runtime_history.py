"""Runtime fingerprints and classes, the runtime's own error lines, and the reproducers on the C++ runner.

Cheap: small synthetic git repos and build folders in tmp, fake runtime logs; no build, no Vulkan.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from git_repos import base_for, git

from vkbench.commits import runtime_fingerprint as rf
from vkbench.commits.fingerprint import Inputs
from vkbench.execution import repros, runners


def commit(repo: Path, message: str, files: dict[str, str], gitlink: str | None = None) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    if gitlink is not None:
        (repo / "third-party" / "volk").mkdir(parents=True, exist_ok=True)  # an unpopulated submodule
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{gitlink},third-party/volk")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


GLSL = "backends/vulkan/runtime/graph/ops/glsl"
INPUTS = Inputs(rf.TIER, ["backends/vulkan/runtime/Foo.cpp", "runtime/core/error.h",
                          rf.SUBMODULE + "third-party/volk"], [GLSL], "test", "")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "executorch"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    pin_a, pin_b = "a" * 40, "b" * 40
    hashes = [
        commit(repo, "start", {"version.txt": "1.5.0a0\n", "backends/vulkan/runtime/Foo.cpp": "1",
                               "runtime/core/error.h": "1", f"{GLSL}/add.glsl": "1", "docs/x.md": "1"},
               gitlink=pin_a),
        commit(repo, "docs only (#1)", {"docs/x.md": "2"}),
        commit(repo, "a Python file no build reads (#2)", {"backends/vulkan/op_registry.py": "2"}),
        commit(repo, "a runtime source (#3)", {"backends/vulkan/runtime/Foo.cpp": "2"}),
        commit(repo, "a new shader (#4)", {f"{GLSL}/mul.glsl": "1"}),
        commit(repo, "bump volk (#5)", {}, gitlink=pin_b),
        commit(repo, "a core header (#6)", {"runtime/core/error.h": "2"}),
        commit(repo, "release branch cut", {"version.txt": "1.4.0\n"}),
    ]
    return repo, hashes


def test_a_runtime_class_is_a_run_of_identical_build_inputs(repo: tuple[Path, list[str]]) -> None:
    path, hashes = repo
    found = rf.runtime_classes(path / ".git", hashes[-1], INPUTS, base_for)
    firsts = [c.first for c in found.classes]
    # docs and a file the build does not read stay in the first class
    assert firsts == [hashes[0], hashes[3], hashes[4], hashes[5], hashes[6], hashes[7]]
    assert found.classes[0].commits == hashes[:3]
    changed = {c.first: c.changed for c in found.classes[1:]}
    assert changed[hashes[3]] == ["backends/vulkan/runtime/Foo.cpp"]
    assert changed[hashes[4]] == [rf.DIRECTORY + GLSL]  # an added shader changes the listed directory
    assert changed[hashes[5]] == [rf.SUBMODULE + "third-party/volk"]
    assert changed[hashes[6]] == ["runtime/core/error.h"]
    assert changed[hashes[7]] == ["base wheel 1.5.1 -> 1.4.1"]
    assert found.classes[1].pull_request == "3" and found.tier == rf.TIER


def test_a_submodule_reads_as_the_commit_it_pins(repo: tuple[Path, list[str]]) -> None:
    path, hashes = repo
    prints = rf.runtime_fingerprints(path / ".git", [hashes[0], hashes[5]], INPUTS, base_for)
    assert prints[0].blobs[rf.SUBMODULE + "third-party/volk"] == "a" * 40
    assert prints[1].blobs[rf.SUBMODULE + "third-party/volk"] == "b" * 40


def test_inputs_come_from_the_build_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout, wheel = tmp_path / "et", tmp_path / "site" / "executorch"
    for name in ("backends/vulkan/runtime/Foo.cpp", "backends/vulkan/runtime/Foo.h", "runtime/core/error.h",
                 "third-party/volk/volk.h", f"{GLSL}/add.glsl", "backends/vulkan/CMakeLists.txt"):
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text("x")
    (checkout / ".gitmodules").write_text('[submodule "volk"]\n\tpath = third-party/volk\n')
    (wheel / "include").mkdir(parents=True)
    build = tmp_path / "build"
    cmake = build / "cmake"
    cmake.mkdir(parents=True)
    link = build / "root" / "executorch"
    link.parent.mkdir()
    link.symlink_to(checkout)  # the full build compiles through a link named executorch
    (cmake / "build.ninja").write_text(
        "build build.ninja: RERUN_CMAKE | /usr/share/cmake/X.cmake "
        f"{checkout}/backends/vulkan/CMakeLists.txt\n"
        "  pool = console\n"
        "build spv.cpp: CUSTOM_COMMAND x\n"
        f"  COMMAND = cd /x && python {link}/backends/vulkan/runtime/gen_vulkan_spv.py --glsl-path "
        f"{link}/{GLSL}/ --output-path /x\n")
    answers = {
        "deps": ("obj.o: #deps 4, deps mtime 1 (VALID)\n"
                 "    ../root/executorch/backends/vulkan/runtime/Foo.cpp\n"
                 "    ../root/executorch/backends/vulkan/runtime/Foo.h\n"
                 "    ../root/executorch/runtime/core/error.h\n"
                 "    ../root/executorch/third-party/volk/volk.h\n"
                 f"    {wheel}/include/executorch/runtime/platform/log.h\n"
                 "    /usr/include/c++/12/vector\n    schema/include/schema_generated.h\n\n"),
        "inputs": f"{link}/{GLSL}/add.glsl\n{wheel}/lib/libexecutorch.so\n{cmake}/spv.cpp\n",
    }
    monkeypatch.setattr(rf, "_ninja", lambda cmake_dir, tool, what, *rest: answers[what])
    found, counts = rf.inputs_from_build(cmake, checkout, wheel)
    assert found.files == ["backends/vulkan/CMakeLists.txt", "backends/vulkan/runtime/Foo.cpp",
                           "backends/vulkan/runtime/Foo.h", f"{GLSL}/add.glsl", "runtime/core/error.h",
                           rf.SUBMODULE + "third-party/volk"]
    assert found.dirs == [GLSL]
    assert counts == {"file": 5, "submodule": 1, "wheel": 2, "build": 2, "system": 2, "dirs": 1}


LOAD_LOG = """\
I 00:00:00.001 executorch:VulkanBackend.cpp:100] Vulkan device: llvmpipe
E 00:00:00.002 executorch:VecUtils.h:367] Exception raised from make_ivec2: (ints.size() == 2) is false!
E 00:00:00.003 executorch:method.cpp:118] Init failed for backend VulkanBackend: 0x1
E 00:00:00.004 executorch:pybindings.cpp:99] Failed to load method forward, error: 0x1
"""


def test_a_load_failure_carries_the_runtimes_own_line() -> None:
    line = runners.runtime_error_line(LOAD_LOG)
    assert line.startswith("VecUtils.h:367] Exception raised from make_ivec2")
    named = runners.named_error("Method load failed: error 1", LOAD_LOG)
    assert named == f"Method load failed: error 1: {line}"
    generic = "E 00:00:00.1 executorch:method.cpp:1] Init failed for backend VulkanBackend: 0x14\n"
    assert runners.runtime_error_line(generic).startswith("method.cpp:1] Init failed")  # the only one
    assert runners.named_error("Method load failed: error 20", "no log") == "Method load failed: error 20"


def test_the_python_runner_keeps_what_the_runtime_logs() -> None:
    with runners.logged_stderr() as log:
        os.write(2, b"E 00:00:01.0 executorch:Value.h:262] isTensorRef is false!\n")
        assert "isTensorRef" in log()


def test_the_native_reproducer_judgement() -> None:
    assert repros.judge_native("make_ivec2", LOAD_LOG, None)[0]
    wrong = "error: wrong output"  # run_unet_step_garbage's Expected: NaN on lavapipe, finite on NVIDIA
    reproduced, line = repros.judge_native(wrong, "{}", [np.array([np.nan, 1.0], "float32")])
    assert reproduced and line == "error: wrong output: NaN (1 of 2 values)"
    reproduced, line = repros.judge_native(wrong, "{}", [np.ones(3, "float32")])
    assert not reproduced and line == "no error: ran"
    ones = [np.ones(4, "float32")]
    reproduced, line = repros.judge_native(wrong, "{}", [np.zeros(4, "float32")], ones)
    assert reproduced and line == "error: wrong output: max abs diff 1, SNR 0.0 dB"  # finite, as on NVIDIA
    reproduced, line = repros.judge_native(wrong, "{}", [ones[0] + 1e-4], ones)
    assert not reproduced and line.startswith("no error: ran, max abs diff 0.0001, SNR 80.0 dB")


def test_a_runner_killed_by_a_signal_reads_as_the_reproducers_crash_line() -> None:
    """A segfault prints nothing; the judge still finds load_segfault_input_staging's Expected text."""
    assert repros.crash_line(-11, "") == "error: load crashed: SIGSEGV (exit -11)"
    assert repros.crash_line(-11, "# loaded\n") == "error: execute crashed: SIGSEGV (exit -11)"
    assert repros.crash_line(0, "") == repros.crash_line(-1, "timeout after 300s") == ""
    output = "" + "\n" + repros.crash_line(-11, "")
    assert repros.judge_native("load crashed: SIGSEGV", output, None) == (
        True, "error: load crashed: SIGSEGV (exit -11)")


def test_every_runtime_row_with_a_reproducer_is_exported() -> None:
    names = {path.stem for path in repros.runtime_reproducers()}
    assert {"load_make_ivec2", "load_missing_logical_not", "run_unet_step_garbage",
            "load_segfault_input_staging"} <= names
    assert not any(name.startswith(("export_", "to_edge_", "preprocess_", "partition_")) for name in names)


def test_a_reproducer_is_captured_where_it_loads(tmp_path: Path) -> None:
    """The reproducer's own export and lowering; the program it would load, with inputs and eager."""
    pytest.importorskip("executorch")
    path = repros.REPRO / "load_layer_norm_no_weight.py"
    saved = repros.export_bundles(tmp_path, [path])
    from vkbench.execution.bundle import Bundle

    bundle = Bundle.load(tmp_path, "repro/load_layer_norm_no_weight")
    assert saved == [tmp_path / "repro__load_layer_norm_no_weight"] and bundle is not None
    assert bundle.programs["vulkan"][4:8] == b"ET12" and bundle.inputs and bundle.expected
    assert sys.modules.get("executorch.runtime") is not None


def _ladder_file(path: Path) -> Path:
    import json

    from vkbench.suite import catalogue

    path.parent.mkdir(parents=True, exist_ok=True)
    probes, runner = ["'probe/mha_cross'", "'probe/mish'", "'probe/elu'"], ["'native'"]
    path.write_text(json.dumps({
        "commit_hash": "a9ed1dc2" + "0" * 32, "env_name": "existing-py3.12", "date": 1, "version": 2,
        "result_columns": ["result", "params"],
        "results": {catalogue.PROBE_LADDER.name: [[3.0, 0.0, 4.0], [probes, runner]]}}))
    return path


def test_the_ladder_keeps_the_runtimes_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Logged where the ladder records its outcomes, stored for the ladder point it explains."""
    from vkbench.results import ladder
    from vkbench.results.asv_files import read_dir
    from vkbench.results.run_log import LOG_SETTING
    from vkbench.suite import catalogue

    log = tmp_path / "failures.jsonl"
    monkeypatch.setenv(LOG_SETTING, str(log))
    ladder.note_outcome("probe/mha_cross", "vulkan", "native", "load",
                        "Method load failed: error 1: Value.h:262] (isTensorRef()) is false!")
    ladder.note_outcome("probe/mish", "vulkan", "python", "runtime", "no runtime here")  # not tried: no line
    result = _ladder_file(tmp_path / "results" / "m" / "a9ed1dc2-existing-py3.12.json")
    (result.parent / "machine.json").write_text('{"machine": "m", "version": 1}')
    records = read_dir(tmp_path / "results").files
    assert ladder.stamp_failures(records, log) == [result]
    reasons = ladder.stop_reasons(read_dir(tmp_path / "results"))
    assert reasons == {"probe/mha_cross": {"m (native)": ladder.Failure(
        "load", "Method load failed: error 1: Value.h:262] (isTensorRef()) is false!")}}
    assert read_dir(tmp_path / "results").files[0].sidecar.failures[
        (catalogue.PROBE_LADDER.name, ("probe/mha_cross", "native"))].stage == "load"


def test_outcomes_of_a_run_give_the_same_reasons(tmp_path: Path) -> None:
    from vkbench.results import ladder
    from vkbench.results.asv_files import read_dir

    _ladder_file(tmp_path / "m" / "a9ed1dc2-existing-py3.12.json")
    (tmp_path / "m" / "machine.json").write_text('{"machine": "m", "version": 1}')
    logged = ladder.logged_outcomes([
        {"workload": "probe/mha_cross", "backend": "vulkan", "runner": "native", "ok": False, "stage": "load",
         "error": "Method load failed: error 1: Value.h:262] isTensorRef"},
        {"workload": "probe/mish", "backend": "vulkan", "runner": "native", "ok": True, "stage": ""}])
    failures = ladder.ladder_failures(read_dir(tmp_path).files[0], logged)
    assert [(params, failure.stage) for _, params, failure in failures] == [(("probe/mha_cross", "native"),
                                                                            "load")]


def test_an_asv_run_of_the_runtime_tier_stores_the_error_lines(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`recording` stamps a ladder point that stopped short with the line its benchmark logged, as it
    stamps a lowering failure: no `runtime stamp-reasons` afterwards. Real asv 0.6 files in tmp."""
    import time

    from asv_json import write_result

    from vkbench.results import ladder
    from vkbench.results.asv_files import read_dir
    from vkbench.results.model import Provenance
    from vkbench.results.recording import recording
    from vkbench.suite import catalogue

    root, commit_hash = tmp_path / "results", "c" * 40
    probes, runners_ = ["'probe/mha_cross'", "'probe/mish'", "'probe/elu'"], ["'native'", "'python'"]
    error = "Method load failed: error 1: Value.h:262] (isTensorRef()) is false!"
    with recording(root, Provenance(tier="runtime", bench_pattern="bench_runtime")) as run:
        monkeypatch.setenv("VKBENCH_FAILURE_LOG", run.env["VKBENCH_FAILURE_LOG"])
        monkeypatch.setenv("ASV_COMMIT", commit_hash)
        monkeypatch.setenv("ASV_ENV_NAME", "virtualenv-py3.12")
        for runner in ("native", "python"):  # what execution.record logs for each outcome short of matches
            ladder.note_outcome("probe/mha_cross", "vulkan", runner, "load", error + "\nsecond line")
        ladder.note_outcome("probe/elu", "vulkan", "native", "lower", "nothing delegated to Vulkan")
        ladder.note_outcome("probe/mish", "vulkan", "python", "runtime", "no runtime here")  # not tried
        row = [[3.0, 3.0, 0.0, None, 4.0, 4.0], [probes, runners_], "v1",
               int(time.time() * 1000), 1.0]
        write_result(run.results, commit_hash, 1, {catalogue.PROBE_LADDER.name: row}, machine="lavapipe-test")
    record = read_dir(root).files[0]
    assert record.tier == "runtime"
    stored = {params: (f.stage, f.error) for (name, params), f in record.sidecar.failures.items()
              if name == catalogue.PROBE_LADDER.name}
    assert stored == {("probe/mha_cross", "native"): ("load", error),
                      ("probe/mha_cross", "python"): ("load", error),
                      ("probe/elu", "native"): ("lower", "nothing delegated to Vulkan")}
    assert ladder.stop_reasons(read_dir(root))["probe/mha_cross"] == {
        "lavapipe-test (native)": ladder.Failure("load", error),
        "lavapipe-test (python)": ladder.Failure("load", error)}


def test_history_classes_has_a_runtime_tier(repo: tuple[Path, list[str]], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture) -> None:
    """`history classes --tier runtime` is `runtime classes`; the lowering tier keeps its options."""
    import json

    from vkbench.build import base_release
    from vkbench.cli import main

    path, hashes = repo
    monkeypatch.setattr(base_release, "base_chooser", lambda: base_for)
    common = ["--mirror", str(path / ".git"), hashes[-1], "--inputs", str(INPUTS.write(tmp_path / "in.json"))]
    written = {}
    for name, argv in (("history", ["history", "classes", "--tier", "runtime"]),
                       ("runtime", ["runtime", "classes"])):
        out = tmp_path / f"classes-{name}.json"
        assert main([*argv, *common, "--out", str(out), "--json"]) == 0
        written[name] = json.loads(out.read_text())
    capsys.readouterr()
    assert written["history"] == written["runtime"] and len(written["history"]["classes"]) == 6
    assert main(["history", "classes", "--tier", "runtime", *common, "--out", str(tmp_path / "x.json"),
                 "--unmeasured", str(tmp_path / "todo")]) == 2
    assert "--unmeasured" in capsys.readouterr().err


def test_a_timed_out_reproducer_leaves_no_child_running(tmp_path: Path) -> None:
    """A reproducer loads in a child of its own; a timeout kills the whole group, grandchild too."""
    import time

    from vkbench.execution.repros import run_group

    marker = tmp_path / "grandchild.pid"
    script = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
              "time.sleep(60)\n")
    assert run_group([sys.executable, "-c", script], timeout=3) == (-1, "timeout after 3s")
    stat = Path(f"/proc/{marker.read_text()}/stat")
    for _ in range(50):  # gone, or a zombie waiting for init to reap it
        if not stat.exists() or stat.read_text().split()[2] == "Z":
            return
        time.sleep(0.1)
    raise AssertionError(f"the reproducer's child {marker.read_text()} is still running")


def test_runtime_record_names_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``vkbench runtime record``: a missing venv, runner or bundle folder is one line and exit 2, before
    asv runs; its asv config drops the build and matrix (the venv is built) and writes where it is told."""
    import json

    from vkbench.cli import main
    from vkbench.runs.runtime_record import config_for

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    args = ["runtime", "record", "HEAD", "--mirror", str(mirror), "--python", str(tmp_path / "py"),
            "--runner", str(tmp_path / "runner"), "--machine", "m", "--bundles", str(tmp_path)]
    assert main(args) == 2
    assert f"no python at {tmp_path / 'py'}" in capsys.readouterr().err
    (tmp_path / "py").write_text("")
    assert main(args) == 2
    assert f"no pte_runner at {tmp_path / 'runner' / 'pte_runner'}" in capsys.readouterr().err
    config = json.loads(config_for(mirror, tmp_path / "results", tmp_path / "scratch").read_text())
    assert (config["repo"], config["results_dir"]) == (str(mirror), str(tmp_path / "results"))
    assert not {"build_command", "install_command", "matrix"} & set(config)
