"""Partition scaling on Blocks(n): counts, phase split, fitted exponent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vkbench.workloads.scaling import loglog_exponent


@pytest.fixture(scope="module")
def partition_report():
    done = subprocess.run(
        [sys.executable, "-m", "vkbench", "partition", "--blocks", "20", "40", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_blocks_give_n_plus_one_partitions(partition_report):
    points = {p["blocks"]: p for p in partition_report["points"]}
    assert points[20]["partitions"] == 21
    assert points[40]["partitions"] == 41
    assert points[40]["nodes"] == 2 * points[20]["nodes"]


def test_phases_split_the_partition_time(partition_report):
    for point in partition_report["points"]:
        phases = point["phases"]
        assert set(phases) == {
            "fusable_patterns",
            "propose_partitions",
            "is_node_supported",
            "other",
            "total",
        }
        parts = sum(v for k, v in phases.items() if k != "total")
        assert parts == pytest.approx(point["seconds"], abs=2e-3)
        assert phases["propose_partitions"] > 0 and phases["is_node_supported"] > 0
    assert isinstance(partition_report["loglog_exponent"], float)


def test_loglog_exponent_recovers_a_power_law():
    sizes = [50, 100, 200, 400]
    assert loglog_exponent(sizes, [3e-5 * n**2.5 for n in sizes]) == pytest.approx(2.5)
    assert loglog_exponent([50], [1.0]) is None


@pytest.mark.slow
def test_blocks_200_partitions():
    from vkbench.workloads.scaling import measure

    assert measure(200).partitions == 201
