"""The regression gate, end to end and offline: ``asv run`` over a real (local) commit range.

The repo and its four commits are ``tests/gate_repo.py``'s. Here asv records ``base`` and ``drop``
(the ``asv continuous`` claims, which measure their own sides, are in
``test_regression_gate_continuous.py``, on the other xdist worker). Then:

* every recorded commit has the ``mish`` probe's CPU ops;
* ``asv compare base drop`` shows ``track_cpu_ops('mish')`` rising (``+``);
* ``vkbench history confirm`` re-measures that step on both sides and stores it reproduced;
* ``asv publish`` writes the site.
"""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("asv")
pytest.importorskip("executorch.backends.vulkan.partitioner.vulkan_partitioner")
#: In the slow set (~3 min of CI on 2 cores beside the other gate file): CI runs asv over the same fixture
#: repo through ``vkbench gate`` (``test_regression_gate_continuous.py``: both sides built, measured,
#: judged, a failing side measured again); ``asv compare``/``publish``/``history confirm`` run here.
pytestmark = pytest.mark.slow

from gate_repo import MACHINE, asv, changed_rows, new_gate, results  # noqa: E402

#: The commits the fixture's ``asv run`` records, and what it runs: the probe (partition time and
#: counted work are measured by ``test_regression_gate_continuous.py``'s ``asv continuous``).
RECORDED = ("base", "drop")
BENCH = r"ProbeCoverage\.track_cpu_ops"


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> dict:
    made = new_gate(tmp_path_factory.mktemp("gate"))
    hashfile = made["tmp"] / "hashes.txt"
    recorded = {name: made["hashes"][name] for name in RECORDED}
    hashfile.write_text("\n".join(recorded.values()) + "\n")
    run = asv(made["config"], "run", "--machine", MACHINE, "--show-stderr", "-b", BENCH,
              f"HASHFILE:{hashfile}")
    return {**made, "recorded": recorded, "run": run}


def test_run_measures_every_commit(gate: dict) -> None:
    assert gate["run"].returncode == 0, gate["run"].stderr[-3000:]
    files = [p.name for p in (gate["tmp"] / "results" / MACHINE).glob("*.json")]
    assert sum("VKBENCH_BUILDaot" in name for name in files) == len(RECORDED), files  # the aot matrix env
    for name, commit in gate["recorded"].items():
        value = results(gate, commit)["results"]["bench_probes.ProbeCoverage.track_cpu_ops"][0]
        assert value and value[0] is not None, (name, value)


def test_compare_shows_more_cpu_ops_after_the_drop(gate: dict) -> None:
    hashes = gate["hashes"]
    done = asv(gate["config"], "compare", "--machine", MACHINE, "--only-changed",
               hashes["base"], hashes["drop"])
    assert done.returncode == 0
    rows = changed_rows(done.stdout, "ProbeCoverage.track_cpu_ops('mish')")
    assert rows and rows[0][1:3] == ["1", "2"], done.stdout  # before, after
    base = results(gate, hashes["base"])["results"]["bench_probes.ProbeCoverage.track_cpu_ops"][0]
    drop = results(gate, hashes["drop"])["results"]["bench_probes.ProbeCoverage.track_cpu_ops"][0]
    assert drop[0] == base[0] + 1  # tanh joins log1p on the CPU


def test_publish_builds_the_site(gate: dict) -> None:
    done = asv(gate["config"], "publish")
    assert done.returncode == 0
    html = gate["tmp"] / "html"
    assert (html / "index.html").exists()
    graphs = list((html / "graphs").rglob("bench_probes.ProbeCoverage.track_cpu_ops.json"))
    assert graphs, sorted(p.name for p in html.iterdir())


def test_confirmation_measures_both_sides_again_and_stores_the_verdict(gate: dict) -> None:
    """``vkbench history confirm``'s run on the gate repo: the drop's ``mish`` step reproduces exactly
    (CI audits every stored confirmation: ``test_confirm``)."""
    from vkbench.results import confirmations
    from vkbench.results.asv_files import read_dir
    from vkbench.results.changes import changes
    from vkbench.runs.confirm import confirm

    results_dir = gate["tmp"] / "results"
    stored = confirmations.path_for(results_dir)
    table = changes(read_dir(results_dir), None, confirmations.read(stored))
    steps = [step for step in table.steps_to_confirm()
             if step.key.benchmark.endswith("ProbeCoverage.track_cpu_ops") and step.key.param == "mish"]
    assert [(step.before, step.after) for step in steps] == [(1, 2)], table.steps_to_confirm()
    env = {"HOME": str(gate["tmp"] / "home"), "VKBENCH_AOT_SMOKE": "", "VKBENCH_BASE_PYTHON": sys.executable}
    done = confirm(results_dir, gate["repo"], gate["config"], MACHINE, steps, env=env)
    assert [(c.measured_before, c.measured_after, c.reproduced) for c in done] == [(1, 2, True)]
    assert done[0].suite and done[0].suite.startswith("suite-") and done[0].machine == MACHINE
    again = changes(read_dir(results_dir), None, confirmations.read(stored))
    row = next(c for c in again.changes
               if c.benchmark.endswith("ProbeCoverage.track_cpu_ops") and c.param == "mish")
    assert row.confirmed is True
    # Auditable: the asv command, its exit status and the re-measured files are kept and agree
    assert done[0].command[3:5] == ["run", "--config"] and done[0].exit_code == 0 and done[0].not_kept is None
    kept = results_dir / done[0].files
    assert sorted(p.name for p in kept.rglob("*.json")) and not list(kept.rglob("machine.json"))
    assert confirmations.audit(results_dir).problems == []
    # Stored: not measured again.
    assert confirm(results_dir, gate["repo"], gate["config"], MACHINE, steps, env=env) == []
