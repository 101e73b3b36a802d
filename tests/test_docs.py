"""The generated sections of ``docs/`` are not stale.

Sections between ``<!-- vkbench:NAME -->`` markers are the output of a
``vkbench`` command (:mod:`vkbench.runs.doc_sections`). Those computed from committed
files (the settings table, the runtime and ladder tables, the policy survey)
are regenerated here and must equal the text in the file; the measured ones
(probes, partition) cannot be re-measured in a test, so their rows must name
today's workloads and agree with the committed 1.5.1 results.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from vkbench.paths import RESULTS_ROOT, ROOT
from vkbench.results.asv_files import read_dir
from vkbench.runs import doc_sections
from vkbench.suite import catalogue

POLICY_SURVEY = "results/policies/executorch-1.5.1-x86_64-2core.json"


def section(name: str) -> str:
    match = doc_sections._pattern(name).search(doc_sections.section_file(name).read_text())
    assert match is not None
    return match.group(0)


def table(name: str) -> list[list[str]]:
    """The rows of the first Markdown table in section ``name`` (header and rule dropped)."""
    lines = [line for line in section(name).splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def release_values(benchmark: catalogue.Benchmark, version: str = "1.5.1+cpu") -> dict[str, float | None]:
    """``{first param: value}`` of a benchmark in the committed CPU results of a ledger release."""
    ledger = json.loads((RESULTS_ROOT / "ledger.json").read_text())
    commit = next(r["commit"] for r in ledger["releases"] if r["version"] == version)
    values: dict[str, float | None] = {}
    for record in read_dir(RESULTS_ROOT / "releases").files:
        if record.commit == commit and record.machine.endswith("-cpu"):
            values.update({params[0]: value for params, value in record.values(benchmark.name).items()})
    return values


@pytest.mark.parametrize("name", ["settings", "runtime", "ladder"])
def test_sections_made_from_committed_files_are_current(name: str) -> None:
    command = [sys.executable, "-m", "vkbench", *doc_sections.SECTIONS[name]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    text = doc_sections.section_file(name).read_text()
    assert doc_sections.refresh(text, name, done.stdout.rstrip() + "\n") == text, (
        f"docs section {name!r} is stale: run `vkbench docs {name}`")


def test_policy_section_is_the_committed_survey() -> None:
    text = doc_sections.section_file("policies").read_text()
    survey = ROOT / POLICY_SURVEY
    rendered = doc_sections.policies_from_json(survey).replace(str(survey), POLICY_SURVEY)
    assert doc_sections.refresh(text, "policies", rendered) == text, (
        f"docs section 'policies' is stale: run `vkbench docs --policies-json {POLICY_SURVEY}`")


def test_probe_section_lists_every_probe_as_recorded() -> None:
    rows = table("probes")
    assert [row[0] for row in rows] == catalogue.PROBE_NAMES
    recorded = release_values(catalogue.PROBE_PROGRAMS)
    for row in rows:
        if row[0] not in recorded:  # added to the catalogue after 1.5.1 was recorded (clone_5d)
            continue
        value = recorded[row[0]]
        if value is not None:
            assert int(row[1]) == value, f"probe {row[0]}: docs say {row[1]} programs, 1.5.1 recorded {value}"
        else:
            assert row[1] == "-", f"probe {row[0]} failed in the 1.5.1 record but the docs give a count"


def test_partition_section_has_every_size_as_recorded() -> None:
    rows = table("partition")
    assert [int(row[0]) for row in rows] == catalogue.BLOCK_SIZES
    recorded = release_values(catalogue.PARTITION_COUNT)
    for row in rows:
        if recorded.get(row[0]) is not None:
            assert int(row[2]) == recorded[row[0]], row
    assert re.search(r"fitted seconds ~ blocks\^\d\.\d\d", section("partition"))
