"""Lowering fingerprints, classes of a range, and the changes table, on small synthetic git repos.

The repos are built here in temp dirs with the two package layouts ExecuTorch
has used (``"executorch" = "src/executorch"`` with symlinks, and
``"executorch.exir" = "exir"`` entries); nothing outside them is touched.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from git_repos import base_for, git

from vkbench.commits.classes import Classes, classify
from vkbench.commits.fingerprint import GitObjects, Inputs, package_root, recorder, repo_paths
from vkbench.results.asv_files import read_dir
from vkbench.results.changes import changes
from vkbench.results.model import Failure, Provenance
from vkbench.suite import catalogue

INPUTS = Inputs("probes", ["executorch/exir/a.py", "executorch/exir/b.py", "executorch/version.py"],
                ["executorch/data/bin"], "1.5.1", "2.11.0")


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """src layout: ``src/executorch/exir`` is a symlink to ``exir``, as on ExecuTorch's main."""
    repo = tmp_path / "executorch"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "src" / "executorch").mkdir(parents=True)
    os.symlink("../../exir", repo / "src" / "executorch" / "exir")
    hashes = [commit(repo, "start", {
        "pyproject.toml": '[tool.setuptools.package-dir]\n"executorch" = "src/executorch"\n',
        "version.txt": "1.4.0a0\n", "exir/a.py": "A = 1\n", "exir/b.py": "B = 1\n", "README.md": "hi\n"})]
    hashes.append(commit(repo, "docs only (#101)", {"README.md": "hello\n"}))
    hashes.append(commit(repo, "change an input (#102)", {"exir/a.py": "A = 2\n"}))
    hashes.append(commit(repo, "a file no lowering reads (#103)", {"exir/c.py": "C = 1\n"}))
    hashes.append(commit(repo, "bump the version (#104)", {"version.txt": "1.5.0a0\n"}))
    hashes.append(commit(repo, "revert the input (#105)", {"exir/a.py": "A = 1\n"}))
    return repo, hashes


def test_inputs_map_through_symlinks_and_both_layouts(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, hashes = repo
    with GitObjects(path / ".git") as objects:
        mapped = repo_paths(objects, hashes[0], INPUTS.files + INPUTS.dirs)
    assert mapped == {"executorch/exir/a.py": "exir/a.py", "executorch/exir/b.py": "exir/b.py",
                      "executorch/version.py": "src/executorch/version.py",  # absent: from the base wheel
                      "executorch/data/bin": "src/executorch/data/bin"}
    old = tmp_path / "old"
    old.mkdir()
    git(old, "init", "-q")
    head = commit(old, "flat layout", {"pyproject.toml": '[tool.setuptools.package-dir]\n"executorch.exir" = '
                                                         '"exir"\n', "exir/a.py": "A = 1\n"})
    with GitObjects(old / ".git") as objects:
        assert repo_paths(objects, head, ["executorch/exir/a.py", "executorch/other/x.py"]) == {
            "executorch/exir/a.py": "exir/a.py", "executorch/other/x.py": None}


def test_a_class_is_a_run_of_identical_inputs(repo: tuple[Path, list[str]]) -> None:
    path, hashes = repo
    found = classify(path / ".git", "HEAD", INPUTS, base_for)
    firsts = [c.first for c in found.classes]
    # a docs change and a file outside the set reuse the measurement; an input change, a new
    # base wheel and a revert (back to an earlier fingerprint, but a new run) re-measure
    assert firsts == [hashes[0], hashes[2], hashes[4], hashes[5]]
    assert [len(c.commits) for c in found.classes] == [2, 2, 1, 1]
    assert found.classes[1].changed == ["exir/a.py"] and found.classes[1].pr == "102"
    assert found.classes[2].changed == ["base wheel 1.4.1 -> 1.5.1"]
    assert found.classes[3].digest != found.classes[2].digest
    assert found.measured_as()[hashes[3]] == hashes[2]
    again = Classes.from_json(json.loads(json.dumps(found.to_json())))
    assert again.measured_as() == found.measured_as() and again.classes[1].subject.startswith("change")


def test_the_recorder_notes_files_opened_and_directories_listed() -> None:
    root = package_root()
    hook = recorder()
    target = next(root.rglob("*.yaml"))
    with hook.recording():
        import executorch.exir  # noqa: F401 - an import is an input

        target.read_text()
        os.listdir(root / "exir")
    target.read_text()  # outside recording: not an input of anything
    files, dirs = hook.paths()
    wheel = f"{root.name}/{target.relative_to(root).as_posix()}"
    assert wheel in files and f"{root.name}/exir" in dirs
    assert "executorch/exir/__init__.py" in files  # imported modules count from sys.modules


def _asv(path: Path, commit_hash: str, date: int, cpu_ops: list[float], failed: list[int],
         suite: str | None = "suite-0123456789abcdef") -> Path:
    """An asv result file of two probes; ``suite`` is the benchmarks' stored version (a suite digest,
    or ``None`` for a record made before digests existed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    probes = ["'mish'", "'mha_cross'"]
    path.write_text(json.dumps({
        "commit_hash": commit_hash, "env_name": "virtualenv-py3.12", "date": date, "version": 2,
        "result_columns": ["result", "params", "version"],
        "results": {catalogue.PROBE_CPU_OPS.name: [cpu_ops, [probes], suite],
                    catalogue.PROBE_PROGRAMS.name: [[1 if not math.isnan(v) else math.nan for v in cpu_ops],
                                                    [probes], suite],
                    catalogue.PROBE_FAILED.name: [failed, [probes], suite]}}))
    return path


def test_changes_put_each_step_on_its_commit(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    from vkbench.results import sidecar

    path, hashes = repo
    found_classes = classify(path / ".git", "HEAD", INPUTS, base_for)
    results = tmp_path / "results"
    box = results / "box"
    _asv(box / "1.json", hashes[1], 1, [2, 6], [0, 0])  # class 0, not its first: counts for the class
    _asv(box / "2.json", hashes[3], 2, [1, math.nan], [0, 1])  # class 1: both steps exactly at hashes[2]
    flatc = Failure("preprocess", "flatc: cannot parse value starting with: -")
    sidecar.merge(box / "2.json", failures=[(catalogue.PROBE_CPU_OPS.name, ("mha_cross",), flatc),
                                             (catalogue.PROBE_FAILED.name, ("mha_cross",), flatc)])
    _asv(box / "3.json", hashes[5], 3, [1, 6], [0, 0])  # class 3: two classes later, a range
    sidecar.merge(box / "3.json", Provenance(tier="probes"))
    softplus = {"nodes": 1, "reasons": {"no operator implementation": 1}}
    tanh = {"nodes": 1, "reasons": {"not in the Vulkan op registry": 1}}
    sidecar.merge(box / "1.json", cpu={("bench_probes", "mish"): {"aten.softplus.default": softplus,
                                                                   "aten.tanh.default": tanh}})
    sidecar.merge(box / "2.json", cpu={("bench_probes", "mish"): {"aten.softplus.default": softplus}})
    table = changes(read_dir(results), found_classes)
    rows = {(c.param, c.commit[:8]): c for c in table.changes}
    mha = rows[("mha_cross", hashes[2][:8])]
    assert mha.benchmark == catalogue.PROBE_FAILED.name  # a probe's failure is told by ProbeFailure
    assert (mha.before, mha.after, mha.exact, mha.regression, mha.fails) == (0, 1, True, True, True)
    assert mha.reason_after == "preprocess: flatc: cannot parse value starting with: -"
    assert mha.files == ["exir/a.py"] and mha.pr == "102"
    assert mha.repro.endswith(f"{hashes[2][:8]}^ {hashes[2][:8]}") and "mha_cross" in mha.repro
    mish = rows[("mish", hashes[2][:8])]
    assert (mish.before, mish.after, mish.regression) == (2, 1, False)
    # a count's step is explained by the CPU ops that changed, with the partitioner's reasons
    assert mish.reason_before == "aten.tanh.default ×1: not in the Vulkan op registry"
    assert mish.reason_after == ""
    fixed = rows[("mha_cross", hashes[5][:8])]
    assert (fixed.before, fixed.after, fixed.exact, fixed.previous) == (1, 0, False, hashes[3])
    assert [c.param for c in table.changes] == ["mha_cross", "mish", "mha_cross"]  # regressions first
    assert [c.benchmark for c in table.changes] == [catalogue.PROBE_FAILED.name, catalogue.PROBE_CPU_OPS.name,
                                                    catalogue.PROBE_FAILED.name]  # failures told once
    measured = {c["commit"]: c["measured_as"] for c in table.commits}
    assert measured == {hashes[0]: hashes[1], hashes[1]: hashes[1], hashes[2]: hashes[3],
                        hashes[3]: hashes[3], hashes[4]: None, hashes[5]: hashes[5]}


def test_an_older_suite_is_drawn_but_never_compared(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    """A class recorded by an older suite as well as by today's: today's records compare with each
    other across it, exactly; a step with an older suite's record on either side is left out, counted."""
    from vkbench.results.changes import OLDER_SUITE

    path, hashes = repo
    found_classes = classify(path / ".git", "HEAD", INPUTS, base_for)
    box = tmp_path / "results" / "box"
    _asv(box / "1.json", hashes[1], 1, [2, 6], [0, 0])  # class 0, today's suite
    _asv(box / "2.json", hashes[2], 2, [1, 6], [0, 0])  # class 1, today's suite
    _asv(box / "3.json", hashes[3], 3, [7, 6], [0, 0], suite=None)  # class 1 again, an older suite
    _asv(box / "5.json", hashes[5], 5, [9, 6], [0, 0], suite=None)  # class 3, the older suite alone
    table = changes(read_dir(tmp_path / "results"), found_classes)
    assert [(c.param, c.before, c.after, c.commit, c.exact, c.suite) for c in table.changes] == [
        ("mish", 2, 1, hashes[2], True, "same")]
    left = {(s.previous, s.commit): s.why for s in table.left_out if s.param == "mish"}
    assert left == {(hashes[3], hashes[5]): OLDER_SUITE}  # the older neighbour; today's is not compared


def test_the_release_line_hands_main_to_the_main_line(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    """The newest release's line goes on into the main commits recorded after it: the release -> main
    step is its own, but a step between two of those main commits is the main line's, told once."""
    from vkbench.results import sidecar

    path, hashes = repo
    found_classes = classify(path / ".git", "HEAD", INPUTS, base_for)
    box = tmp_path / "results" / "box"
    tag = box / "tag.json"
    _asv(tag, "f" * 40, 1, [3, 6], [0, 0])  # a release tag, off the main line
    sidecar.merge(tag, Provenance(release="v1.5.0"))
    _asv(box / "1.json", hashes[1], 2, [2, 6], [0, 0])  # class 0
    _asv(box / "2.json", hashes[2], 3, [1, 6], [0, 0])  # class 1: mish 2 -> 1, exactly at hashes[2]
    table = changes(read_dir(tmp_path / "results"), found_classes)
    told = [(c.line, c.param, c.before, c.after, c.previous[:8], c.commit[:8]) for c in table.changes]
    assert told == [("main", "mish", 2, 1, hashes[1][:8], hashes[2][:8]),
                    ("releases", "mish", 3, 2, "f" * 8, hashes[1][:8])]


def test_a_recorded_commit_that_read_more_widens_the_set(tmp_path: Path, load_benchmark, monkeypatch) -> None:
    """The suite logs the executorch modules it imported; the sidecar keeps them; ``widen`` adds
    what the class's set lacks, so the classes are recomputed with the new import."""
    from vkbench.commits.fingerprint import widen
    from vkbench.results import run_log
    from vkbench.results.recording import recording

    common = load_benchmark("common")
    monkeypatch.setattr(run_log, "_NOTED_INPUTS", set())  # what earlier tests noted is logged again
    results = tmp_path / "results"
    with recording(results, Provenance(tier="gate")) as run:
        monkeypatch.setenv("VKBENCH_FAILURE_LOG", run.env["VKBENCH_FAILURE_LOG"])
        monkeypatch.setenv("ASV_COMMIT", "c" * 40)
        monkeypatch.setenv("ASV_ENV_NAME", "virtualenv-py3.12")
        import executorch.exir  # noqa: F401 - imported by the lowering the suite just ran

        common.note_inputs()
        _asv(run.results / "box" / "c.json", "c" * 40, 1, [1, 6], [0, 0])
    record = read_dir(results).files[0]
    assert "executorch/exir/__init__.py" in record.sidecar.inputs
    read = [(record.commit, record.sidecar.inputs) for record in read_dir(results).files]
    wider, added = widen(INPUTS, read)
    assert "executorch/exir/__init__.py" in added["c" * 40] and set(INPUTS.files) < set(wider.files)
    assert widen(wider, read) == (wider, {})


def test_bisect_halves_over_classes_and_measures_only_first_commits() -> None:
    from vkbench.commits.classes import CommitClass
    from vkbench.runs.bisect import Probe, bisect

    classes = Classes("gate", "A..B", [CommitClass(f"{i:040x}", f"d{i}", "1.4.1", [f"{i:040x}"])
                                       for i in range(40)])
    asked = []

    def measure(commit_class: CommitClass) -> float:
        asked.append(commit_class.first)
        return math.nan if int(commit_class.first, 16) >= 27 else 0.0  # fails from class 27 on

    found, steps = bisect(classes, 0, 39, measure, log=lambda line: None)
    assert found is classes.classes[27] and len(asked) <= 2 + 6  # both ends, then log2(39) halvings
    assert all(c in {k.first for k in classes.classes} for c in asked) and len(steps) == len(asked)
    with pytest.raises(ValueError, match="no step"):
        bisect(classes, 0, 10, measure, log=lambda line: None)
    probe = Probe(catalogue.PROBE_FAILED.name, "mha_cross")
    assert probe.pattern == r"^bench_probes\.ProbeFailure\."  # the whole class: one setup_cache
