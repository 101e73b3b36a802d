"""The regression gate's ``asv continuous``, end to end and offline, on ``tests/gate_repo.py``'s commits.

``asv continuous`` builds and measures both of its sides itself, so this file needs no recorded run
and goes to the other xdist worker than ``test_regression_gate.py``:

* ``asv continuous -f 1.02 base small`` on the counted work (``PartitionWork``) exits 1 and names
  the ``is_node_supported`` phase and the ``total``, not torch.fx's ``propose_partitions``;
  ``asv compare -f 1.4`` of the CPU-time track it measured beside flags nothing: time cannot tell;
* ``asv compare -f 1.4 base slow`` of the CPU-time track names ``time_partition``;
* ``asv continuous base base`` exits 0 (in the slow set).
"""

from __future__ import annotations

import pytest

pytest.importorskip("asv")
pytest.importorskip("executorch.backends.vulkan.partitioner.vulkan_partitioner")

from gate_repo import MACHINE, TIME, WORK, asv, changed_rows, new_gate, results  # noqa: E402


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return new_gate(tmp_path_factory.mktemp("gate-continuous"))


def test_counted_work_flags_a_small_regression_time_cannot(gate: dict) -> None:
    """~3 % more partitioner work: the exact count flags it at -f 1.02 and names the phase."""
    done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", f"{WORK}|{TIME}", "-f", "1.02",
               "base", "small")
    assert done.returncode == 1, done.stdout[-3000:]
    flagged = {row[-1].split("(", 1)[1] for row in changed_rows(done.stdout, ")")
               if "PartitionWork" in row[-1]}
    assert flagged == {"50, 'is_node_supported')", "50, 'total')"}, done.stdout[-3000:]
    base, small = (results(gate, gate["hashes"][name])["results"] for name in ("base", "small"))
    work = "bench_partition.PartitionWork.track_partition_events"
    before, after = base[work][0], small[work][0]  # phases: propose, fusable, is_node_supported, total
    print("counted work base -> small:", before, after, f"total x{after[-1] / before[-1]:.4f}")
    assert before[0] == after[0], "torch.fx's propose_partitions did not change"
    assert 1.02 < after[-1] / before[-1] < 1.06
    timed = asv(gate["config"], "compare", "--machine", MACHINE, "-f", "1.4", "base", "small")  # as measured
    time_row = "PartitionScaling.time_partition(50)"
    assert timed.returncode == 0 and time_row in timed.stdout, timed.stdout[-3000:]
    assert not changed_rows(timed.stdout, time_row), timed.stdout[-3000:]


def test_time_track_flags_the_slow_partitioner(gate: dict) -> None:
    """The O(nodes^2) partition: ``asv compare -f 1.4`` of the CPU-time track names ``time_partition``.

    ``slow`` alone is measured (``base`` as the continuous above measured it, or now if this runs
    alone): the exit status of ``asv continuous`` on a flagged row is the test above's.
    """
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
def test_continuous_same_commit_passes(gate: dict) -> None:
    """In the slow set (80 s of CI): in CI, the unchanged phases that ``asv continuous -f 1.02 base small``
    leaves unflagged and the unflagged ``asv compare -f 1.4`` of the time track stand for it."""
    done = asv(gate["config"], "continuous", "--machine", MACHINE, "-b", TIME, "-f", "1.4", "base", "base")
    assert done.returncode == 0, done.stdout[-3000:]
