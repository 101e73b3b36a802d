"""The counted partitioner work (:mod:`vkbench.workloads.partition_work`) is exact and names its phases.

An exact count is what lets the gate read it at ``-f 1.02``: the same partition
counted in two fresh processes must agree to the event, whatever the parent's
hash seed (the child pins its own, and torch.fx's node hashes no longer
follow heap addresses). The count must also leave the partition as it was:
the partitions found equal an ordinary timed partition's.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("executorch.backends.vulkan.partitioner.vulkan_partitioner")

from vkbench.suite.catalogue import PHASES, WORK_PHASES  # noqa: E402
from vkbench.workloads import partition_work  # noqa: E402

pytestmark = pytest.mark.skipif(partition_work.unavailable_reason() is not None,
                                reason=str(partition_work.unavailable_reason()))


def _count_with_parent_seed(seed: str, blocks: int) -> dict:
    """:func:`partition_work.count_partition_work` called from a parent process with ``seed``."""
    code = ("import json; from vkbench.workloads.partition_work import count_partition_work; "
            f"print(json.dumps(count_partition_work({blocks})[{blocks}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed})
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def two_counts() -> tuple[dict, dict]:
    """``Blocks(20)`` counted twice, by parents with other hash seeds (two fresh children)."""
    return _count_with_parent_seed("1", 20), _count_with_parent_seed("2", 20)


def test_two_processes_with_other_hash_seeds_count_exactly_the_same(two_counts: tuple[dict, dict]) -> None:
    first, second = two_counts
    assert first["events"] == second["events"]
    assert set(first["events"]) == {*PHASES, "other", "pattern_graphs", "total"} >= set(WORK_PHASES)
    parts = {k: v for k, v in first["events"].items() if k not in ("total", "pattern_graphs")}
    assert first["events"]["total"] == sum(parts.values())
    assert 0 < first["events"]["pattern_graphs"] < first["events"]["fusable_patterns"]  # a part of it
    assert all(first["events"][phase] > 0 for phase in PHASES)


def test_count_finds_the_partitions_a_timed_partition_finds(two_counts: tuple[dict, dict]) -> None:
    from vkbench.core.lowering import timed_partition
    from vkbench.workloads.scaling import blocks_edge_program

    counted = two_counts[0]
    partitions, _ = timed_partition(copy.deepcopy(blocks_edge_program(20)))
    assert counted["partitions"] == partitions > 0
    assert counted["counted"] == partition_work.EVENTS_COUNTED


def test_a_failing_count_names_the_child_error(tmp_path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: no vkbench here' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(RuntimeError, match=r"exit 3\): ModuleNotFoundError: no vkbench here"):
        partition_work.count_partition_work(20, python=str(fake))


def test_bad_arguments_exit_2(capsys) -> None:
    assert partition_work.child(["many"]) == 2
    assert "whole numbers" in capsys.readouterr().err
