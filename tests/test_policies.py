"""LeRobot policy entries: rows, reasons, counts checked against an independent lowering.

Each fast entry is built, exported and lowered once per session (the
``fast_rows`` fixture); the independent lowering calls executorch's
``to_edge_transform_and_lower`` with a plain ``VulkanPartitioner`` and counts
the graph itself, like the seed does.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path

import pytest
import torch
from delegation_counts import direct_delegation_info

policies = pytest.importorskip("vkbench.workloads.policies")

from vkbench import cli  # noqa: E402
from vkbench.core.lowering import STAGES  # noqa: E402
from vkbench.results.pattern_cache import cache_working  # noqa: E402
from vkbench.workloads.policies import ENTRIES, Entry, Row  # noqa: E402

FAST = ["act", "diffusion", "tdmpc", "vqbet", "gaussian_actor"]
#: What-if and rewrite variants (``notes`` "what-if: ..." / "rewrite: ...") lower through their base
#: entry's path (their outputs are tested equal to it): not again here, to keep CI under 20 minutes.
FAST_ENTRIES = [e.name for e in ENTRIES.values()
                if e.policy in FAST and not e.notes.startswith(("what-if", "rewrite"))]
#: Surveyed in CI: one of each kind of row (lowered; blocked at export; blocked in the partitioner),
#: ~60 s. The other fast entries (vqbet/rollout, lowered only with multinomial let through to the CPU,
#: 120-180 s with its retry; act/model ...) are surveyed by the same tests in the slow set; the retry
#: itself is tested in CI on small modules below.
CI_ENTRIES = ["tdmpc/pi", "tdmpc/q", "diffusion/sample_loop", "gaussian_actor/deterministic"]
ENTRY_PARAMS = [name if name in CI_ENTRIES else pytest.param(name, marks=pytest.mark.slow)
                for name in FAST_ENTRIES]
#: Lowered a second time, independently, in CI (15-20 s each here); the others are in the slow set.
INDEPENDENT_FAST = ["tdmpc/pi"]
INDEPENDENT_SLOW = ["tdmpc/encoder", "tdmpc/dynamics", "tdmpc/q", "act/model", "diffusion/rgb_encoder",
                    "diffusion/unet_step"]


class SurveyedRows(dict):
    """Fast entries' rows, each surveyed the first time a test asks for it (partition only)."""

    def __missing__(self, name: str) -> Row:
        # ExecuTorch's counts of the very program the row is made from; the pattern-graph cache working
        # (the bug row's what-if: same partitions, no re-export of the rope graphs per partition call)
        with direct_delegation_info() as seen, cache_working():
            row = self[name] = policies.survey_entry(ENTRIES[name], partition_only=True)
        if seen:
            FAST_ET_COUNTS[name] = seen[-1]
        return row

    def ci_rows(self) -> list[Row]:
        """The CI entries' rows (what the tests over several rows read)."""
        return [self[name] for name in CI_ENTRIES]



#: Every lowering of this module partitions with the pattern graphs built once (same partitions).
pytestmark = pytest.mark.usefixtures("pattern_graphs_built_once")

@pytest.fixture(scope="session")
def fast_rows() -> SurveyedRows:
    """The fast entries as the gate tier records them: partitioned, no Vulkan code generation.

    The counts equal the full lowering's (the independent tests below lower fully through
    executorch); partition-only takes 28 s instead of 126 s for diffusion/unet_step. The full path
    (preprocess, program) is the CLI tests' and the slow set's.
    """
    logging.getLogger().setLevel(logging.WARNING)
    return SurveyedRows()


#: ``(num_delegated_nodes, num_non_delegated_nodes)`` of a direct ``get_delegation_info`` call on each
#: fast entry's lowered program, taken while ``fast_rows`` lowers it (no second lowering).
FAST_ET_COUNTS: dict[str, tuple[int, int]] = {}


@pytest.mark.parametrize("name", ENTRY_PARAMS)
def test_fast_entry_records_executorchs_counts(fast_rows, name):
    """The row's ExecuTorch counts are get_delegation_info's on the program it was made from
    (tests/test_delegation_info.py checks the probes and the one rewrite entry left out here)."""
    row = fast_rows[name]
    if row.status != "lowered":
        assert row.coverage is None
        return
    c = row.coverage
    assert (c["et_delegated_nodes"], c["et_non_delegated_nodes"]) == FAST_ET_COUNTS[name]


def independent_counts(name: str) -> tuple[int, Counter]:
    """(Vulkan programs, CPU compute ops) from executorch directly, without vkbench.core.lowering."""
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
    from executorch.exir import to_edge_transform_and_lower

    module, inputs = ENTRIES[name].build()
    with torch.no_grad():
        exported = torch.export.export(module.eval(), inputs, strict=False)
    level = logging.getLogger().level
    try:
        edge = to_edge_transform_and_lower(exported, partitioner=[VulkanPartitioner()])
    finally:
        logging.getLogger().setLevel(level)
    programs, cpu = 0, Counter()
    for node in edge.exported_program().graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        op = getattr(node.target, "__name__", str(node.target))
        if op == "executorch_call_delegate":
            programs += 1
        elif op != "getitem":
            cpu[op] += 1
    return programs, cpu


def test_every_policy_package_has_an_entry():
    import lerobot.policies as lp

    packages = {
        path.name
        for path in Path(lp.__file__).parent.iterdir()
        if path.is_dir() and any(path.glob("configuration_*.py"))
    } - {"rtc"}  # real-time chunking: a helper used by the flow policies, not a policy
    assert packages, "no lerobot policy packages found"
    assert packages <= set(policies.policies()), packages - set(policies.policies())


def test_entry_names_are_policy_slash_part():
    for name, entry in ENTRIES.items():
        assert name == entry.name and name.split("/")[0] == entry.policy and "/" in name
        assert entry.description


@pytest.mark.parametrize("name", ENTRY_PARAMS)
def test_fast_entry_row(fast_rows, name):
    row = fast_rows[name]
    assert row.status in ("lowered", "blocked")
    if row.status == "blocked":
        assert row.stage in ("build", *STAGES), row
        assert row.error_type and row.error, row
        assert row.coverage is None
        return
    c = row.coverage
    assert c["nodes_total"] == c["nodes_cpu"] + c["nodes_delegated"] > 0
    assert sum(c["cpu_ops"].values()) == c["nodes_cpu"] == len(c["cpu_nodes"])
    assert c["vulkan_programs"] >= 1
    for cpu in c["cpu_nodes"]:
        assert cpu["op"] in c["cpu_ops"]
        assert cpu["reasons"] and all(reason.strip() for reason in cpu["reasons"]), cpu


def _check_independent(fast_rows_or_row, name):
    row = fast_rows_or_row
    assert row.status == "lowered", row
    programs, cpu = independent_counts(name)
    assert row.coverage["vulkan_programs"] == programs
    assert row.coverage["cpu_ops"] == dict(cpu)
    assert row.coverage["nodes_cpu"] == sum(cpu.values())


@pytest.mark.parametrize("name", INDEPENDENT_FAST)
def test_counts_equal_independent_lowering(fast_rows, name):
    _check_independent(fast_rows[name], name)


@pytest.mark.slow
@pytest.mark.parametrize("name", INDEPENDENT_SLOW)
def test_counts_equal_independent_lowering_slow(fast_rows, name):
    _check_independent(fast_rows[name], name)


def test_known_blockers_keep_their_rows(fast_rows):
    loop = fast_rows["diffusion/sample_loop"]
    assert (loop.status, loop.stage, loop.error_type) == ("blocked", "export", "GuardOnDataDependentSymNode")
    sac = fast_rows["gaussian_actor/deterministic"]
    assert (sac.status, sac.error_type) == ("blocked", "AttributeError")


@pytest.mark.slow
def test_vqbet_rollout_is_lowered_with_multinomial_let_through(fast_rows):
    vqbet = fast_rows["vqbet/rollout"]  # blocked by multinomial in the default config, lowered without it
    assert vqbet.status == "lowered" and vqbet.allowed_on_cpu == ["aten.multinomial.default"]
    assert vqbet.default_blocker.startswith("to_edge: SpecViolationError")
    assert "multinomial" in vqbet.default_blocker
    assert vqbet.coverage["cpu_ops"]["aten.multinomial.default"] == 1


def test_vqbet_part_entries_take_what_the_rollout_feeds_them():
    """The per-network VQ-BeT entries' inputs are the shapes ``vqbet(batch, rollout=True)`` passes."""
    from vkbench.workloads.policies.classic import _vqbet_policy, _VQBeTHeadPredictions

    torch.manual_seed(0)
    model = _vqbet_policy().eval().vqbet
    seen = {}
    for name, module in (("vqbet/rgb_encoder", model.rgb_encoder), ("vqbet/gpt", model.policy),
                         ("vqbet/action_head", model.action_head)):
        module.register_forward_hook(lambda _m, args, out, name=name: seen.__setitem__(name, (args[0], out)))
    n = model.config.n_obs_steps
    batch = {"observation.state": torch.randn(1, n, 2), "observation.images": torch.randn(1, n, 1, 3, 96, 96)}
    with torch.no_grad():
        model(batch, rollout=True)
        for name, (arg, _) in seen.items():
            assert [tuple(t.shape) for t in ENTRIES[name].build()[1]] == [tuple(arg.shape)], name
        features, head_out = seen["vqbet/action_head"]
        probs, offsets = _VQBeTHeadPredictions(model.action_head)(features)
    temperature = model.config.bet_softmax_temperature
    assert torch.allclose(probs, torch.softmax(head_out["cbet_logits"] / temperature, dim=-1))
    assert offsets.shape[:3] == head_out["cbet_logits"].shape


def test_partitioner_crash_is_attributed_to_partition(fast_rows):
    assert fast_rows["gaussian_actor/deterministic"].stage == "partition"


def _boom():
    raise OSError("no hub here\nsecond line")


class _DataDependent(torch.nn.Module):
    def forward(self, x):
        return x[x > 0].sum() if int((x > 0).sum()) > 1 else x


def test_failing_build_produces_a_row():
    entry = Entry("fake/build", "fake", "raises in build", _boom)
    row = policies.survey_entry(entry)
    assert (row.status, row.stage, row.error_type) == ("blocked", "build", "OSError")
    assert row.error == "no hub here"


def test_failing_export_produces_a_row():
    build = lambda: (_DataDependent(), (torch.randn(4),))  # noqa: E731
    entry = Entry("fake/export", "fake", "data-dependent branch", build)
    row = policies.survey_entry(entry)
    assert (row.status, row.stage) == ("blocked", "export")
    assert row.error_type and row.error


def test_blockers_rank_by_entries_unblocked(fast_rows):
    rows = fast_rows.ci_rows()
    ranked = policies.blockers(rows)
    lowered = {r.entry: r for r in rows if r.status == "lowered"}
    by_op = ranked["by_op"]
    assert {b.name for b in by_op} == {op for r in lowered.values() for op in r.coverage["cpu_ops"]}
    for b in by_op:
        assert b.nodes == sum(lowered[e].coverage["cpu_ops"][b.name] for e in b.entries)
        assert b.unblocks == [e for e in b.entries if list(lowered[e].coverage["cpu_ops"]) == [b.name]]
        assert sum(b.reasons.values()) >= b.nodes and all(b.reasons)
    keys = [(len(b.unblocks), len(b.entries), b.nodes) for b in by_op]
    assert keys == sorted(keys, reverse=True)
    assert sum(b.nodes for b in ranked["by_reason"]) >= sum(b.nodes for b in by_op)


def test_formatters_name_every_row(fast_rows):
    rows = fast_rows.ci_rows()
    table, markdown = policies.format_table(rows), policies.format_markdown(rows)
    data = json.loads(policies.format_json(rows))
    for row in rows:
        assert row.entry in table and row.entry in markdown
    assert [r["entry"] for r in data["rows"]] == [r.entry for r in rows]
    assert set(data["blockers"]) == {"by_op", "by_reason"}


def test_export_cache_round_trip(tmp_path, monkeypatch, fast_rows):
    monkeypatch.setenv("VKBENCH_CACHE", str(tmp_path))
    entry = ENTRIES["tdmpc/pi"]
    assert policies.load_exported(entry.name) is None
    policies.exported_program(entry)
    files = list(tmp_path.rglob("*.pt2"))
    assert len(files) == 1 and "torch" in files[0].parent.name and "lerobot" in files[0].parent.name
    row = policies.survey_entry(entry, use_cache=True)
    assert row.coverage["cpu_ops"] == fast_rows["tdmpc/pi"].coverage["cpu_ops"]
    assert row.coverage["nodes_total"] == fast_rows["tdmpc/pi"].coverage["nodes_total"]


def test_unknown_policy_exits_2_with_one_line(capsys):
    assert cli.main(["policies", "--policy", "no_such_policy"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "no_such_policy" in err


def test_command_prints_rows_and_its_json_is_only_json(capsys):
    """Policy builders print to stdout (lerobot's parameter counts); --json must stay parseable."""
    assert cli.main(["policies", "--policy", "tdmpc/pi", "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert [r["entry"] for r in data["rows"]] == ["tdmpc/pi"]
    assert "tdmpc/pi" in err  # progress on stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", [e.name for e in ENTRIES.values() if e.slow])
def test_vla_entry_row(name):
    start = time.perf_counter()
    row = policies.survey_entry(ENTRIES[name])
    assert time.perf_counter() - start < 1200
    assert row.status in ("lowered", "blocked")
    if row.status == "blocked":
        assert row.stage in ("build", *STAGES) and row.error_type, row
    else:
        for cpu in row.coverage["cpu_nodes"]:
            assert cpu["reasons"], cpu


def test_wall_x_without_its_extra_is_a_build_row_naming_it(monkeypatch):
    """No peft (lerobot[wallx] not installed): both wall_x rows are blocked at build, saying which extra."""
    from lerobot.utils import import_utils

    available = import_utils.is_package_available
    monkeypatch.setattr(import_utils, "is_package_available",
                        lambda name, *args, **kwargs: name != "peft" and available(name, *args, **kwargs))
    for name in ("wall_x/prefix", "wall_x/denoise_step"):
        row = policies.survey_entry(ENTRIES[name])
        assert (row.status, row.stage, row.error_type) == ("blocked", "build", "ImportError"), row
        assert "peft" in row.error and "lerobot[wallx]" in row.error


@pytest.mark.slow
def test_wall_x_prefix_and_step_are_one_euler_step_of_predict():
    """prefix + denoise_step reproduce ``Qwen2_5_VLMoEForAction.predict`` (diffusion, one Euler step)."""
    pytest.importorskip("peft")
    pytest.importorskip("torchdiffeq")
    from vkbench.workloads.policies import wall_x

    model = wall_x._model()
    model.to_bfloat16_for_selected_params()  # as WallXPolicy does: predict() casts to bfloat16
    chunk = 32
    ids, mask, pixels, grid, proprio, proprio_mask = wall_x._prefix_inputs(chunk)
    dof = torch.ones(1, chunk, wall_x._DOF)
    types = ids == wall_x._ACTION
    torch.manual_seed(1)
    with torch.no_grad():
        expected = model.predict(
            predict_mode="diffusion", pred_horizon=chunk, action_dim=wall_x._DOF, input_ids=ids,
            attention_mask=mask, pixel_values=pixels, image_grid_thw=grid, proprioception=proprio,
            agent_pos_mask=proprio_mask, dof_mask=dof, moe_token_types=types, num_inference_timesteps=1,
        )["predict_action"]
        torch.manual_seed(1)
        noise = torch.randn(1, chunk, wall_x._DOF)
        embeds, positions = wall_x._Prefix(model)(ids, mask, pixels, grid, proprio, proprio_mask)
        velocity = wall_x._DenoiseStep(model, chunk)(torch.tensor(0.0), noise, dof, ids, mask, embeds,
                                                       positions, types)
    torch.testing.assert_close(noise + velocity, expected)


def test_an_export_failure_is_cached_like_a_program(tmp_path, monkeypatch):
    """torch.export does not involve ExecuTorch: a failing export fails for every commit, so it is cached."""
    import torch

    from vkbench.workloads.policies.registry import Entry

    class DataDependent(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x[: int((x > 0).sum())]  # a data-dependent size

    builds = []

    def build():
        builds.append(1)
        return DataDependent(), (torch.randn(8),)

    monkeypatch.setenv("VKBENCH_CACHE", str(tmp_path))
    entry = Entry("probe/data_dependent", "probe", "test entry", build)
    first = policies.survey_entry(entry, use_cache=True)
    second = policies.survey_entry(entry, use_cache=True)
    assert first.status == second.status == "blocked" and first.stage == second.stage == "export"
    assert (first.error_type, first.error) == (second.error_type, second.error) and first.error
    assert builds == [1]  # the second survey neither built nor traced it
    assert len(list(tmp_path.rglob("*.export-failed.json"))) == 1
    uncached = policies.survey_entry(entry)  # without the cache, the export is tried again
    assert uncached.stage == "export" and builds == [1, 1]


def test_a_non_core_aten_blocker_is_let_through_to_the_cpu_and_both_answers_kept():
    """smolvla's blocker in one op: the default config stops at to_edge; with the op on the CPU
    the rest lowers, and the row says both."""
    from vkbench.workloads.graphs import Fn
    from vkbench.workloads.policies.registry import Entry
    from vkbench.workloads.policies.survey import _cells, survey_entry

    boundaries = torch.linspace(-1, 1, 5)
    module = Fn(lambda t: torch.bucketize(torch.relu(t) * 2.0, boundaries) + 1)
    entry = Entry("probe/bucketize", "probe", "relu then bucketize", lambda: (module, (torch.randn(4, 8),)))
    row = survey_entry(entry, to_executorch=False)
    assert row.lowered and row.allowed_on_cpu == ["aten.bucketize.Tensor"]
    assert row.default_blocker.startswith("to_edge: SpecViolationError: Operator torch._ops.aten.bucketize")
    assert "aten.bucketize.Tensor" in row.coverage["cpu_ops"] and row.coverage["vulkan_programs"] >= 1
    assert _cells(row)[1] == "blocked@to_edge by aten.bucketize.Tensor; lowered with it on the CPU"


def test_the_retry_lowers_a_program_of_its_own_so_unbacked_symbols_do_not_block_it(tmp_path, monkeypatch):
    """smolvla/prefix in miniature: bucketize (not Core ATen) and a data-dependent size. Lowering the
    same ExportedProgram again fails on the unbacked symbols the first to_edge left pending
    (PendingUnbackedSymbolNotFound, ExecuTorch's bug row); the retry lowers a fresh export instead."""
    from vkbench.core.lowering import LoweringError, export_program, lower, lower_allowing_non_core
    from vkbench.workloads.graphs import Fn
    from vkbench.workloads.policies.registry import Entry
    from vkbench.workloads.policies.survey import survey_entry

    monkeypatch.setenv("VKBENCH_CACHE", str(tmp_path))
    boundaries = torch.tensor([-1.0, 0.0, 1.0])

    def build():
        module = Fn(lambda t: torch.nonzero(t > 0).sum() + t + torch.bucketize(t, boundaries))
        return module, (torch.randn(8),)

    program = export_program(*build())
    with pytest.raises(LoweringError):  # the default config: bucketize is not Core ATen
        lower(None, (), exported=program, to_executorch=False)
    with pytest.raises(LoweringError, match="Pending unbacked symbols"):  # the same program, again
        lower(None, (), exported=program, to_executorch=False, allow_on_cpu=["aten.bucketize.Tensor"])
    copied = lower_allowing_non_core(None, (), exported=program, to_executorch=False)
    assert copied[0] is not None and copied[2].allowed == ["aten.bucketize.Tensor"]
    row = survey_entry(Entry("probe/unbacked_bucketize", "probe", "nonzero + bucketize", build),
                       to_executorch=False, use_cache=True)
    assert row.lowered and row.allowed_on_cpu == ["aten.bucketize.Tensor"]
    assert "aten.bucketize.Tensor" in row.coverage["cpu_ops"]


def test_a_row_still_blocked_after_letting_ops_through_keeps_the_default_blocker_and_says_what_came_next():
    from vkbench.workloads.policies import Row
    from vkbench.workloads.policies.survey import _cells

    row = Row("smolvla/prefix", "smolvla", "blocked", stage="to_edge", error_type="SpecViolationError",
              error="Operator torch._ops.aten.bucketize.Tensor is not in Core ATen opset",
              allowed_on_cpu=["aten.bucketize.Tensor"],
              blocked_with_allowed="to_edge: PendingUnbackedSymbolNotFound")
    assert _cells(row)[1] == ("blocked@to_edge; with aten.bucketize.Tensor on the CPU: "
                              "to_edge: PendingUnbackedSymbolNotFound")
    assert _cells(row)[6].startswith("SpecViolationError: Operator torch._ops.aten.bucketize")


def test_wall_x_rewrite_computes_what_the_unchanged_step_computes():
    """The export rewrite drops two guards only: same inputs, same velocity."""
    pytest.importorskip("peft")
    torch.manual_seed(0)
    step, inputs = ENTRIES["wall_x/denoise_step"].build()
    torch.manual_seed(0)
    rewrite, same_inputs = ENTRIES["wall_x/denoise_step_without_guards"].build()
    assert all(torch.equal(a, b) for a, b in zip(inputs, same_inputs, strict=True))
    with torch.no_grad():
        assert torch.equal(step(*inputs), rewrite(*inputs))


def test_gaussian_actor_rewrite_computes_what_the_unchanged_actor_computes():
    """The partition rewrite skips an identity chunk only: same inputs, same action."""
    actor, inputs = ENTRIES["gaussian_actor/deterministic"].build()
    rewrite, same_inputs = ENTRIES["gaussian_actor/deterministic_without_chunk"].build()
    assert all(torch.equal(a, b) for a, b in zip(inputs, same_inputs, strict=True))
    with torch.no_grad():
        assert torch.equal(actor(*inputs), rewrite(*inputs))


@pytest.mark.parametrize("step", ["action_step", pytest.param("video_step", marks=pytest.mark.slow)])
def test_lingbot_va_real_rope_computes_what_the_complex_rope_computes(step):
    """The export rewrite swaps complex RoPE for real cos/sin products: same inputs, same output (cos/sin
    of torch.polar and of torch.cos/sin differ by an ulp), and the unchanged entry keeps the complex code."""
    from lerobot.policies.lingbot_va.utils import WanRotaryPosEmbed

    module, inputs = ENTRIES[f"lingbot_va/{step}"].build()
    rewrite, same_inputs = ENTRIES[f"lingbot_va/{step}_real_rope"].build()
    assert all(torch.equal(a, b) for a, b in zip(inputs, same_inputs, strict=True))
    assert module.transformer.rope.forward.__func__ is WanRotaryPosEmbed.forward
    with torch.no_grad():
        assert torch.allclose(module(*inputs), rewrite(*inputs), rtol=0, atol=1e-5)
