"""The gate's verdict on a planted suite (``tests/plants.py``): innocents pass, regressions fail by phase.

Every plant is counted in one child process (Blocks(50), the gate tier's smallest counted size) and
judged by :func:`vkbench.results.verdict.work_rows` / :func:`~vkbench.results.verdict.decision_rows`,
the functions ``vkbench gate`` applies to asv's results. The whole ``vkbench gate`` runs on one
innocent and one regression in ``test_regression_gate_continuous.py``.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("executorch.backends.vulkan.partitioner.vulkan_partitioner")

from plants import PLANTS, count_plants  # noqa: E402

from vkbench.results import verdict  # noqa: E402
from vkbench.workloads import partition_work  # noqa: E402

pytestmark = pytest.mark.skipif(partition_work.unavailable_reason() is not None,
                                reason=str(partition_work.unavailable_reason()))
#: Blocks(20) in CI (the plants' phases step at any size); ``VKBENCH_PLANT_BLOCKS=50`` for the docs table.
BLOCKS = int(os.environ.get("VKBENCH_PLANT_BLOCKS", "20"))


@pytest.fixture(scope="module")
def counted() -> dict[str, dict]:
    return count_plants(BLOCKS, [plant.name for plant in PLANTS])


def _rows(counted: dict[str, dict], name: str) -> list[verdict.Row]:
    base, plant = counted["base"], counted[name]
    before, after = verdict.as_points(BLOCKS, base["events"]), verdict.as_points(BLOCKS, plant["events"])
    return verdict.work_rows(before, after) + verdict.decision_rows(
        {str(BLOCKS): base["partitions"]}, {str(BLOCKS): plant["partitions"]}, before, after)


def _judged(count: dict) -> dict[str, int]:
    """The phases the gate judges, exactly (``pattern_graphs``, building graphs with torch.export,
    moves by a few dozen events with the caches earlier exports left: a notice, never judged)."""
    events = count["events"]
    graphs = events["pattern_graphs"]
    return {**{p: events[p] for p in ("propose_partitions", "is_node_supported", "other")},
            "fusable_patterns": events["fusable_patterns"] - graphs, "total": events["total"] - graphs}


def test_the_base_counts_the_same_after_every_plant_was_undone(counted: dict[str, dict]) -> None:
    assert _judged(counted["base-again"]) == _judged(counted["base"])
    assert counted["base-again"]["partitions"] == counted["base"]["partitions"] == BLOCKS + 1
    for name in counted:  # the verdict table of docs/suite.md
        rows = _rows(counted, name)
        print(f"{name}: {[(r.kind, r.phase, r.before, r.after, round(r.ratio or 0, 4)) for r in rows]}")


@pytest.mark.parametrize("plant", [p for p in PLANTS if p.innocent], ids=lambda p: p.name)
def test_an_innocent_plant_gives_no_failing_row(counted: dict[str, dict], plant) -> None:
    rows = _rows(counted, plant.name)
    assert not verdict.failing(rows), (plant.what, rows)
    moved = {row.phase for row in rows}
    if plant.name == "new-pattern":  # its own phase steps, nothing else
        assert moved == {"pattern_graphs"}, rows
        assert set(counted[plant.name]["patterns"]) - set(counted["base"]["patterns"]) \
            == {"vkbench_plant_gated_mlp"}
    else:
        assert _judged(counted[plant.name]) == _judged(counted["base"]), plant.what


@pytest.mark.parametrize("plant", [p for p in PLANTS if not p.innocent], ids=lambda p: p.name)
def test_a_guilty_plant_fails_and_names_its_phase(counted: dict[str, dict], plant) -> None:
    rows = verdict.failing(_rows(counted, plant.name))
    assert plant.phase in {row.phase for row in rows}, (plant.what, rows)
    assert all(row.benchmark.startswith("bench_partition.") for row in rows)
    print(plant.name, [(r.kind, r.phase, r.before, r.after, round(r.ratio or 0, 4)) for r in rows])
