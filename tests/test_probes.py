"""The seed's probe table, reproduced through vkbench's one lowering path."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
import torch
from delegation_counts import direct_delegation_info

from vkbench.core.lowering import Coverage, lower
from vkbench.core.reasons import NOT_PARTITIONED, NOT_REPORTED
from vkbench.suite.catalogue import PROBE_NAMES
from vkbench.workloads.graphs import Fn

#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")

# (Vulkan programs, sorted distinct CPU ops) -- the seed's output, executorch 1.5.1.
SEED_TABLE = {
    "linear_f32": (1, []),
    "linear_bf16": (0, ["aten.addmm.default", "aten.permute_copy.default"]),
    "conv2d_batch1": (1, []),
    "conv2d_batch2": (0, ["aten.convolution.default"]),
    "elu": (0, ["aten.elu.default"]),
    "mish": (2, ["aten.log1p.default"]),
    "var": (0, ["aten.var.correction"]),
    "conv_transpose1d": (0, ["aten.convolution.default"]),
    "index_put": (1, ["aten.index_put.default"]),
}


@pytest.mark.parametrize("name", sorted(SEED_TABLE))
def test_probe_matches_seed_table(probe_coverage, name):
    coverage = probe_coverage[name]
    assert (coverage.vulkan_programs, coverage.cpu_op_names) == SEED_TABLE[name]


@pytest.mark.parametrize("name", sorted(SEED_TABLE))
def test_every_cpu_node_carries_the_partitioners_reason(probe_coverage, name):
    coverage = probe_coverage[name]
    assert len(coverage.cpu_nodes) == coverage.nodes_cpu
    for cpu in coverage.cpu_nodes:
        assert cpu.reasons, cpu
        assert all(r.strip() for r in cpu.reasons)
        # These probes are all rejected by the partitioner itself, not by fallbacks.
        assert NOT_REPORTED not in cpu.reasons and NOT_PARTITIONED not in cpu.reasons


def test_known_reasons(probe_coverage):
    assert probe_coverage["elu"].reasons_by_op() == {"aten.elu.default": {"no operator implementation": 1}}
    assert probe_coverage["linear_bf16"].reasons_by_op()["aten.addmm.default"] == {"dtype not supported": 1}
    assert probe_coverage["conv2d_batch2"].reasons_by_op() == {
        "aten.convolution.default": {"op args not supported": 1}
    }


def test_node_counts_add_up(probe_coverage):
    for name, coverage in probe_coverage.items():
        assert coverage.nodes_total == coverage.nodes_delegated + coverage.nodes_cpu, name
        assert (coverage.nodes_delegated > 0) == (coverage.vulkan_programs > 0), name
    assert probe_coverage["elu"].cpu_percent == 100.0
    assert probe_coverage["linear_f32"].cpu_percent == 0.0


def test_stage_seconds_are_measured(probe_coverage):
    mish = probe_coverage["mish"]
    assert set(mish.seconds) == {"export", "to_edge", "partition", "preprocess", "to_executorch"}
    assert all(s >= 0 for s in mish.seconds.values())
    assert mish.seconds["partition"] > 0 and mish.seconds["preprocess"] > 0
    assert mish.preprocess_calls == mish.vulkan_programs == 2
    assert mish.program_bytes and mish.program_bytes > 0
    assert mish.peak_rss_mb > 100
    # partition phases add up to the partition stage
    assert sum(mish.partition_phases.values()) == pytest.approx(mish.seconds["partition"], abs=1e-3)


def test_counts_equal_the_seeds_own_counting():
    """An independent lowering, counted the seed's way, agrees with vkbench."""
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
    from executorch.exir import to_edge_transform_and_lower

    torch.manual_seed(0)
    model = Fn(lambda t: torch.nn.functional.elu(t) * torch.sigmoid(t))
    x = torch.randn(1, 16, 32)
    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[VulkanPartitioner()])
    names = [
        getattr(n.target, "__name__", str(n.target))
        for n in edge.exported_program().graph.nodes
        if n.op == "call_function"
    ]
    coverage, _ = lower(model, (x,))
    assert coverage.vulkan_programs == names.count("executorch_call_delegate")
    assert coverage.cpu_ops == {"aten.elu.default": names.count("aten.elu.default")}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vkbench", *args], capture_output=True, text=True, timeout=600
    )


def test_cli_probe_json_subset():
    done = _cli("probe", "elu", "linear_bf16", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["probe"]: row for row in json.loads(done.stdout)["probes"]}
    assert rows["elu"]["cpu_ops"] == {"aten.elu.default": 1}
    assert rows["elu"]["cpu_nodes"][0]["reasons"] == ["no operator implementation"]
    assert sorted(rows["linear_bf16"]["cpu_ops"]) == SEED_TABLE["linear_bf16"][1]
    assert "Due to" not in done.stdout + done.stderr  # partitioner chatter is silenced


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("probe", "nope"), "unknown probe 'nope'"),
        (("partition", "--blocks", "0"), "positive"),
        (("partition", "--blocks", "x"), "--blocks"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args, needle, capsys):
    from vkbench.cli import main

    assert main(list(args)) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], captured.err
    assert captured.out == ""


def test_cli_bad_input_from_the_shell():
    done = _cli("partition", "--blocks", "-1")
    assert done.returncode == 2
    expected = "vkbench partition: error: --blocks: size must be a positive integer, got '-1'"
    assert done.stderr.strip() == expected


@pytest.fixture(scope="module")
def probe_partitions() -> dict[str, tuple[Coverage | None, tuple[int, int] | None]]:
    """Every probe lowered once as the gate does, partition only (seconds each), with ExecuTorch's
    direct ``get_delegation_info`` counts of the program: (record or None, counts or None).

    Partition only also suits ExecuTorch's count: it counts the delegates' ``original_module`` graphs,
    which code generation does not change. A probe that fails to lower has neither. The pattern-graph
    cache works here as in ``probe_coverage`` (same partitions, a third of the time).
    """
    from vkbench.core.lowering import LoweringError
    from vkbench.results.pattern_cache import cache_working
    from vkbench.workloads.probes import PROBES, build_probe

    logging.getLogger().setLevel(logging.WARNING)
    results: dict[str, tuple[Coverage | None, tuple[int, int] | None]] = {}
    with cache_working():
        for name in PROBES:
            module, inputs = build_probe(name)
            with direct_delegation_info() as seen:
                record: Coverage | None
                try:
                    record = lower(module, inputs, to_executorch=False, partition_only=True)[0]
                except LoweringError:
                    record = None
            results[name] = (record, seen[-1] if seen else None)
    return results


def test_partition_only_gives_the_full_lowerings_counts(probe_coverage, probe_partitions):
    """The gate's partition-only pass counts what the full lowering delegates, without codegen."""
    for name in probe_coverage:  # the seed probes (the upstream-bug repros are tested below)
        quick = probe_partitions[name][0]
        assert quick is not None, name
        full = probe_coverage[name]
        assert quick.partition_only and not full.partition_only
        assert (quick.vulkan_programs, quick.nodes_cpu, quick.nodes_delegated, quick.cpu_ops) == (
            full.vulkan_programs, full.nodes_cpu, full.nodes_delegated, full.cpu_ops), name
        assert quick.seconds["preprocess"] == 0.0 and quick.preprocess_calls == 0
        assert quick.program_bytes is None


def test_a_failing_tool_inside_lowering_names_its_own_error(monkeypatch, tmp_path):
    """flatc failing with exit 1: the LoweringError carries flatc's first error line."""
    from executorch.exir._serialize import _flatbuffer

    from vkbench.core.lowering import LoweringError, lower
    from vkbench.workloads.probes import build_probe

    tool = tmp_path / "flatc"
    tool.write_text("#!/bin/sh\necho 'flatc: warning: ignored' >&2\necho 'flatc: error: schema broken' >&2\n"
                    "exit 1\n")
    tool.chmod(0o755)
    monkeypatch.setattr(_flatbuffer, "_get_flatc_path", lambda: str(tool))
    module, inputs = build_probe("linear_f32")
    with pytest.raises(LoweringError) as raised:
        lower(module, inputs)
    assert "returned non-zero exit status 1" in str(raised.value)
    assert "flatc: error: schema broken" in str(raised.value)


def test_upstream_bug_probes_reproduce_the_policy_failures(probe_partitions):
    """The minimal repros lower as the policies do on executorch 1.5.1 (as far as lowering goes).

    The partition-only pass (counts equal to the full lowering's, above) says how far each gets. The
    ones that fail in lowering are ``tests/test_bugs.py``'s (each fails at its row's stage with its
    row's error); the full lowering of those that fail at load or run is their reproducers' (they lower
    and then ask for a Vulkan build).
    """
    from vkbench.workloads.probes import PROBES

    bugs = sorted(name for name, probe in PROBES.items() if probe.upstream_bug)
    assert bugs == ["bucketize", "clone_5d", "complex_rope", "conv2d_padding_valid", "div_0d",
                    "empty_like_transposed", "group_norm_3d", "index_dim1", "inputless_partition",
                    "int32_to_bool", "layer_norm_no_affine", "logical_not", "mha_cross", "relower_unbacked",
                    "rms_norm_one_plus_weight", "split_one_piece"]
    assert probe_partitions["split_one_piece"] == (None, None)  # fails in partition: nothing to count
    # relower_unbacked fails on its second lowering of one program (tests/test_bugs.py); once, it lowers
    assert probe_partitions["relower_unbacked"][0] is not None
    mha = probe_partitions["mha_cross"][0]
    assert mha is not None and mha.vulkan_programs == 3  # loading it needs a Vulkan runtime
    # the runtime refuses them at load, crashes (clone_5d) or (group_norm_3d) runs them wrong: lowered whole
    for name in ("index_dim1", "layer_norm_no_affine", "logical_not", "conv2d_padding_valid",
                 "rms_norm_one_plus_weight", "int32_to_bool", "div_0d", "group_norm_3d", "clone_5d"):
        found = probe_partitions[name][0]
        assert found is not None and (found.vulkan_programs, found.nodes_cpu) == (1, 0), name


# -- ExecuTorch's own count beside vkbench's (issue 30, item 8; tests/test_delegation_info.py) ------
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_probe_records_carry_executorchs_counts(probe_partitions, name: str) -> None:
    record, direct = probe_partitions[name]
    if record is None:  # fails before the partition is made: nothing to count, nothing recorded
        assert direct is None
        return
    assert (record.et_delegated_nodes, record.et_non_delegated_nodes) == direct


def test_the_counts_differ_as_documented(probe_partitions) -> None:
    """mish: one CPU node by vkbench's count; ExecuTorch adds the getitem of each delegate output."""
    mish, _ = probe_partitions["mish"]
    assert mish is not None
    assert mish.nodes_cpu == 1 and mish.et_non_delegated_nodes == 3
    linear, _ = probe_partitions["linear_f32"]
    assert linear is not None
    assert (linear.nodes_cpu, linear.et_non_delegated_nodes) == (0, 1)  # the output's getitem
