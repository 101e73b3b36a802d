"""The regression gate end to end and offline, on ``tests/gate_repo.py``'s commits: ``vkbench gate``
and ``asv continuous``, which build and measure both of their sides themselves (so this file needs
no recorded run and goes to the other xdist worker than ``test_regression_gate.py``):

* ``vkbench gate base comment`` (a comment-only commit, its side never measured before): exit 0,
  no failing row, nothing re-measured;
* ``vkbench gate base small`` (~3 % more partitioner work): exit 1, the ``is_node_supported`` phase
  named, confirmed by a second measurement of both sides; torch.fx's phase not named; the base side
  the first gate run kept is taken, not measured again;
* in the slow set: ``asv compare -f 1.4 base slow`` of the CPU-time track names ``time_partition``;
  README's ``asv continuous -f 1.02 -b PartitionWork`` and ``-f 1.4 -b ProbeCoverage``
  exit 0 on the comment-only commit with a cold cache, and ``asv continuous base small`` names the phase.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

pytest.importorskip("asv")
pytest.importorskip("executorch.backends.vulkan.partitioner.vulkan_partitioner")

from gate_repo import MACHINE, TIME, WORK, asv, asv_env, changed_rows, new_gate, results  # noqa: E402

#: What CI's gate runs compare of the trimmed grid: the counted work at 20 blocks (a third of the 50-block
#: count's cost; the plants' phases step at any size). A changed partitioning (``PartitionScalingRecord``)
#: and a probe's coverage (``drop``) are judged in ``tests/test_verdict.py``, the planted suite and the slow
#: set's ``asv continuous`` runs; lowering the probe would add a process of ~20 s to every side.
COMPARED = r"^bench_partition\.PartitionWork\.track_partition_events\(20,"


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return new_gate(tmp_path_factory.mktemp("gate-continuous"))


Gated = tuple[subprocess.CompletedProcess[str], dict, str, float]


def _vkbench_gate(gate: dict, base: str, head: str) -> Gated:
    report = gate["tmp"] / f"report-{base}-{head}.md"
    command = [sys.executable, "-m", "vkbench", "gate", base, head, "--repo", str(gate["repo"]),
               "--config", str(gate["config"]), "--machine", MACHINE, "--pattern", COMPARED,
               "--report", str(report), "--json"]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=asv_env(gate["config"]), timeout=1800,
                          check=False)
    seconds = time.monotonic() - start
    print(f"$ vkbench gate {base} {head} -> exit {done.returncode} in {seconds:.0f} s\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    return done, found, report.read_text() if report.is_file() else "", seconds


def test_gate_passes_a_comment_only_commit(gate: dict) -> None:
    done, found, report, _ = _vkbench_gate(gate, "base", "comment")
    assert done.returncode == 0, done.stderr[-3000:]
    assert found["compared"] >= 5 and not [r for r in found["rows"] if r["kind"] in ("regression",
                                                                                      "decision changed")]
    assert len(found["runs"]) + len(found["reused"]) == 2, "one asv process a side; nothing measured again"
    assert "✅ no confirmed regression" in report
    gate["gated"] = "base"  # its first measurement of base is kept for the next test


def test_gate_fails_a_small_regression_and_names_its_phase(gate: dict) -> None:
    done, found, report, _ = _vkbench_gate(gate, "base", "small")
    assert done.returncode == 1, done.stderr[-3000:]
    failing = [r for r in found["rows"] if r["kind"] == "regression"]
    phases = {r["phase"] for r in failing}
    assert "is_node_supported" in phases <= {"is_node_supported", "total"}, found["rows"]
    assert all(r["confirmed"] for r in failing), "re-measured on both sides"
    # the base side is the one the comment-only gate kept (same commit, suite and stack), when it ran first
    assert found["reused"] == ([gate["hashes"]["base"]] if gate.get("gated") == "base" else [])
    assert len(found["runs"]) == 4 - len(found["reused"]), found["runs"]
    assert ("kept from an earlier gate run" in report) == bool(found["reused"])
    support = next(r for r in failing if r["phase"] == "is_node_supported")
    assert support["after"] > support["before"] and support["ratio"] > 1.02
    assert "❌ 2 confirmed regressions" in report and "is_node_supported" in report
    assert "vkbench gate base small --repo" in report


@pytest.mark.slow
def test_time_track_flags_the_slow_partitioner(gate: dict) -> None:
    """The O(nodes^2) partition: ``asv compare -f 1.4`` of the CPU-time track names ``time_partition``."""
    hashes = gate["hashes"]
    hashfile = gate["tmp"] / "base-slow.txt"
    hashfile.write_text(f"{hashes['base']}\n{hashes['slow']}\n")
    run = asv(gate["config"], "run", "--machine", MACHINE, "--skip-existing-successful", "-b", TIME,
              f"HASHFILE:{hashfile}")
    assert run.returncode == 0, run.stderr[-3000:]
    done = asv(gate["config"], "compare", "--machine", MACHINE, "-f", "1.4", "base", "slow")
    assert done.returncode == 0, done.stdout[-3000:]
    assert changed_rows(done.stdout, "PartitionScaling.time_partition(50)"), done.stdout[-3000:]


@pytest.mark.slow
def test_readme_continuous_commands_pass_a_comment_only_commit(gate: dict) -> None:
    """README's ``asv continuous`` commands on a comment-only head never measured before (cold cache)."""
    for bench, factor in (("PartitionWork", "1.02"), ("ProbeCoverage", "1.4")):
        done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", bench, "-f", factor,
                   "base", "comment")
        assert done.returncode == 0, (bench, done.stdout[-3000:])


@pytest.mark.slow
def test_asv_continuous_names_the_phase_of_a_small_regression(gate: dict) -> None:
    """~3 % more partitioner work: asv's own continuous flags it at -f 1.02 and names the phase."""
    done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", WORK, "-f", "1.02", "base",
               "small")
    assert done.returncode == 1, done.stdout[-3000:]
    rows = changed_rows(done.stdout, ")")
    flagged = {row[-1].split("(", 1)[1] for row in rows
               if "PartitionWork.track_partition_events(50," in row[-1]}
    assert flagged == {"50, 'is_node_supported')", "50, 'total')"}, done.stdout[-3000:]
    base, small = (results(gate, gate["hashes"][name])["results"] for name in ("base", "small"))
    work = "bench_partition.PartitionWork.track_partition_events"
    assert base[work][0][0] == small[work][0][0], "torch.fx's propose_partitions did not change"
