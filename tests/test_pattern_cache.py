"""The bug list's performance row ``partition_reexports_pattern_graphs`` and its what-if.

ExecuTorch 1.5.1 re-exports its constant RoPE pattern graphs on every ``VulkanPartitioner.partition``
(``@lru_cache`` above ``@register_pattern_graph``). Checked here: the row as data (kind, owner, stated
dates) in ``vkbench bugs``, ``--json`` and bugs.html; the run-time fix and the export count of
:mod:`vkbench.results.pattern_cache` on a small ``Blocks(n)``; the stored what-if and its table in
``docs/suite.md``; the ``fusable_patterns`` share on the dashboard's scaling card.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.results import bug_knowledge, pattern_cache
from vkbench.results.bug_knowledge import KnowledgeError, knowledge
from vkbench.results.bug_rows import PERFORMANCE, bug_rows
from vkbench.results.pattern_cache import CACHED, SHIPPED

ROW = "partition_reexports_pattern_graphs"


@pytest.fixture(scope="module")
def row():
    return next(r for r in bug_rows() if r.id == ROW)


# -- the row -------------------------------------------------------------------------------------------

def test_the_row_loads_with_its_kind_owner_and_stated_dates(row):
    bug = next(b for b in knowledge().bugs if b.id == ROW)
    assert (bug.kind, bug.owner, bug.stage) == (PERFORMANCE, bug_knowledge.PARTITIONER, "partition")
    assert (bug.first_bad, bug.fixed_in) == ("before dbcf6ac7", "open at cff6f4dd")
    assert bug.repro == f"repro/{ROW}.py" and (ROOT / bug.repro).is_file()
    assert (row.kind, row.first_bad, row.fixed_in, row.entries) == (PERFORMANCE, "before dbcf6ac7",
                                                                    "open at cff6f4dd", [])
    assert "checked in the ExecuTorch history" in row.history
    assert all(other.kind == bug_knowledge.FAILURE for other in knowledge().bugs if other.id != ROW)


def test_the_row_shows_its_stored_what_if(row):
    """Per size: 3 exports a partition as shipped, none with the cache working, and fewer CPU seconds."""
    assert [item["blocks"] for item in row.what_if] == [50, 100, 200]
    for item in row.what_if:
        assert (item["exports_as_shipped"], item["exports_cache_working"]) == ([3], [0])
        assert item["cpu_seconds_cache_working"] < item["cpu_seconds_as_shipped"]
        assert item["same_partitions"] is True and item["rounds"] >= 3


@pytest.mark.parametrize(("change", "problem"), [
    (('kind = "performance"', 'kind = "slow"'), "kind 'slow' is not one of failure, performance"),
    (('fixed_in = "open at cff6f4dd"\n', ""), "a performance row states its 'fixed_in'"),
    (('first_bad = "before dbcf6ac7"', 'first_bad = "before dbcf6ac7"\npattern = "x"'),
     "a performance row matches no recorded failure: no 'pattern'"),
    (('id = "build_hub_offline"', 'id = "build_hub_offline"\nfirst_bad = "abc"'),
     "(build_hub_offline): 'first_bad' is stated only on a performance row"),
])
def test_a_bad_performance_entry_names_the_entry(tmp_path, change, problem):
    old, new = change
    text = bug_knowledge.SOURCE.read_text()
    assert old in text
    bad = tmp_path / "bugs.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(KnowledgeError, match=re.escape(problem)):
        bug_knowledge.load(bad)


def test_the_row_without_a_stored_what_if_has_none(tmp_path):
    assert next(r for r in bug_rows(tmp_path) if r.id == ROW).what_if == []


def test_cli_table_and_json_show_the_kind(capsys):
    from vkbench.cli import main

    assert main(["bugs", "--owner", "partitioner"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(ROW))
    assert line.split()[1:3] == ["performance", "ExecuTorch"] and "open at cff6f4dd" in line
    assert main(["bugs", "--json"]) == 0
    listed = {item["id"]: item for item in json.loads(capsys.readouterr().out)["rows"]}
    assert listed[ROW]["kind"] == PERFORMANCE and listed["partition_split_one_piece"]["kind"] == "failure"
    assert listed[ROW]["what_if"][0]["exports_as_shipped"] == [3]


def test_bugs_page_marks_the_row_and_its_what_if():
    from vkbench.site import bugs_page

    text = bugs_page.render(bug_rows())
    cell = text[text.index(f'id="{ROW}"'):]
    cell = cell[:cell.index("</tr>")]
    assert '<span class="kind">performance</span>' in cell
    assert "Blocks(50)</code>: " in cell and "3 → 0 exports" in cell and "before dbcf6ac7" in cell
    row_tag = text[:text.index(f'id="{ROW}"')].rsplit("<tr ", 1)[1]
    assert "upstream performance" in row_tag and "fixed" not in row_tag  # "open at cff6f4dd" is no fix
    assert "1 row is a <b>performance</b> row" in text


# -- the run-time fix and the count ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def small() -> pattern_cache.WhatIf:
    """The what-if on Blocks(2), one round (about 10 s: three pattern-graph exports a side)."""
    return pattern_cache.measure((2,), rounds=1, machine="test")


def test_the_registry_exports_on_every_call_and_the_fix_once():
    from executorch.backends.vulkan.patterns import fusable_patterns

    registered = {name: e.get_graphs_fn for name, e in fusable_patterns.items() if e.get_graphs_fn}
    assert set(registered) == {"export_llama_rope", "hf_rope"}
    with pattern_cache.counting_exports() as exports:
        registered["export_llama_rope"]()
    assert exports == [1]  # the registered function exports, whatever its module-level lru_cache
    with pattern_cache.cache_working() as cached, pattern_cache.counting_exports() as exports:
        fusable_patterns["export_llama_rope"].get_graphs_fn()
        fusable_patterns["export_llama_rope"].get_graphs_fn()
    assert exports == [1] and set(cached) == set(registered)
    assert {name: e.get_graphs_fn for name, e in fusable_patterns.items() if e.get_graphs_fn} == registered
    import torch.export

    assert torch.export.export.__name__ == "export" and not hasattr(torch.export.export, "__wrapped__")


def test_a_partition_exports_three_graphs_as_shipped_and_none_with_the_cache(small):
    result = small.sizes[2]
    assert [s.exports for s in result.samples[SHIPPED]] == [3]
    assert [s.exports for s in result.samples[CACHED]] == [0]
    assert small.fill.exports == 3 and result.same_partitions
    assert result.samples[SHIPPED][0].partitions == result.samples[CACHED][0].partitions == 3
    assert result.cpu(CACHED)[0] < result.cpu(SHIPPED)[0]


def test_the_what_if_round_trips_and_prints(small, tmp_path, capsys):
    from vkbench.cli import main

    path = pattern_cache.write(small, tmp_path / "history" / "pattern-cache.json")
    assert pattern_cache.read(path) == small
    assert main(["pattern-cache", "--show", "--output", str(path), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| 2 | 3 → 0 |" in out and "1 rounds a side" in out
    assert main(["pattern-cache", "--rounds", "0"]) == 2
    assert main(["pattern-cache", "--show", "--output", str(tmp_path / "none.json")]) == 2


def test_the_stored_what_if_is_the_table_in_the_docs():
    """docs/suite.md shows `vkbench pattern-cache --show --markdown` of the committed file."""
    from vkbench import tables

    found = pattern_cache.read()
    assert sorted(found.sizes) == [50, 100, 200] and found.rounds >= 3
    for result in found.sizes.values():
        assert len(result.cpu(SHIPPED)) == len(result.cpu(CACHED)) == found.rounds
    doc = (ROOT / "docs" / "suite.md").read_text()
    assert tables.markdown(pattern_cache.HEADERS, pattern_cache.table(found)) in doc
    assert pattern_cache.caption(found) in doc


# -- the dashboard ----------------------------------------------------------------------------------------

def test_the_scaling_card_shows_the_fusable_share_and_links_the_row(tmp_path):
    from vkbench.site.dashboard.dashboard_page import scaling_section
    from vkbench.site.dashboard.views import FUSABLE_PHASE, load_pattern_bug, load_scaling
    from vkbench.site.load import load_site_data

    data = load_site_data(tmp_path / "html", RESULTS_ROOT)
    scale = load_scaling(data)[0]
    bug = load_pattern_bug(data)
    assert bug is not None and bug.id == ROW
    body = scaling_section([scale], bug).body
    shares = dict(re.findall(r'data-blocks="(\d+)" data-share="([\d.]+)"', body))
    assert set(shares) == {str(n) for n in scale.phases[FUSABLE_PHASE]}
    for n, share in shares.items():
        phases = {phase: by_size[int(n)] for phase, by_size in scale.phases.items() if int(n) in by_size}
        assert math.isclose(float(share), phases[FUSABLE_PHASE] / sum(phases.values()), abs_tol=1e-4)
    assert f'href="bugs.html#{ROW}"' in body and "open at cff6f4dd" in body
    assert float(shares["50"]) > 0.5 > float(shares["400"])  # a constant cost: most of a small partition
    without = scaling_section([scale]).body  # no bug list: the share, no link
    assert 'data-share="' in without and f"bugs.html#{ROW}" not in without


def test_the_share_of_a_record_without_phases_is_left_out():
    from vkbench.site.dashboard.dashboard_page import pattern_share_note
    from vkbench.site.dashboard.views import Scaling

    bare = Scaling("m", "c" * 40, "commit cccccccc", {50: 1.0, 100: 2.0}, {}, {}, [50, 100])
    assert pattern_share_note(bare, None) == ""
    split = Scaling("m", "c" * 40, "x", {50: 1.0}, {"fusable_patterns": {50: 0.75},
                                                    "propose_partitions": {50: 0.25}}, {}, [50])
    assert split.phase_share("fusable_patterns", 50) == 0.75 and split.phase_share("other", 50) is None
    note = pattern_share_note(split, None)
    assert "50 blocks <b>75 %</b>" in note and "bugs.html" not in note

