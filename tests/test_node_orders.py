"""The node-order measurement's file: the stored one reads, version 1 migrates, the summary says each size."""

from __future__ import annotations

import json

import pytest

from vkbench.workloads import node_orders


def test_the_stored_measurement_reads_and_every_size_says_where_it_was_measured() -> None:
    spreads = node_orders.from_json(json.loads(node_orders.PATH.read_text()))
    assert spreads and all(spread.environment.startswith("python ") for spread in spreads)
    for spread in spreads:
        kinds = {run.order.split()[0] for run in spread.runs}
        assert kinds == {"first-hash", "address", "position"}, spread.blocks
        assert sum(run.order.startswith("first-hash") for run in spread.runs) >= 8
        assert all(run.partitions == spread.blocks + 1 for run in spread.runs)


def test_a_version_1_file_migrates_its_note_into_each_size() -> None:
    run = {"blocks": 5, "order": "position", "events": {"propose_partitions": 10, "total": 20},
           "cpu_seconds": {"propose_partitions": 0.1, "total": 0.2}, "partitions": 6}
    old = {"vkbench_node_orders": 1, "note": "python 3.12.1, here", "sizes": [{"blocks": 5, "runs": [run]}]}
    spreads = node_orders.from_json(old)
    assert spreads[0].environment == "python 3.12.1, here" and spreads[0].runs[0].events["total"] == 20
    assert node_orders.from_json(node_orders.to_json(spreads)) == spreads
    with pytest.raises(ValueError, match="not a vkbench node-orders file"):
        node_orders.from_json({"vkbench_node_orders": 9, "sizes": []})
