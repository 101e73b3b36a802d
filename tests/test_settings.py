"""One settings place: every ``VKBENCH_*`` variable the code reads is declared, documented, read lazily."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vkbench import settings
from vkbench.runs import doc_sections

ROOT = Path(__file__).resolve().parent.parent


def test_every_variable_the_code_names_is_declared():
    named = set()
    for path in [*ROOT.joinpath("vkbench").rglob("*.py"), *ROOT.joinpath("benchmarks").glob("*.py"),
                 ROOT / "scripts" / "setup"]:
        named |= set(re.findall(r"VKBENCH_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    assert named - set(settings.SETTINGS) == set()
    assert set(settings.SETTINGS) - named == set()  # no knob nothing reads


def test_values_are_read_when_asked_not_at_import(monkeypatch):
    from vkbench.execution import runners, step_limit
    from vkbench.execution.outcome import Outcome

    monkeypatch.setenv("VKBENCH_STEP_CAP", "77")
    monkeypatch.setenv("VKBENCH_MIN_REPEATS", "2")
    every_size_runs = step_limit.find_step_limit(lambda n: Outcome(f"many/{n}", "vulkan", "python", ok=True))
    assert every_size_runs.cap == every_size_runs.limit == 77
    assert runners.timing()["min_repeats"] == 2
    monkeypatch.delenv("VKBENCH_STEP_CAP")
    assert settings.integer("VKBENCH_STEP_CAP") == 4000  # the default: the largest Many(n)
    with pytest.raises(KeyError):
        settings.text("VKBENCH_NO_SUCH_KNOB")


def test_empty_value_means_default_unless_empty_is_a_value(monkeypatch):
    monkeypatch.setenv("VKBENCH_AOT_SMOKE", "")
    assert settings.text("VKBENCH_AOT_SMOKE", empty_is_a_value=True) == ""
    assert settings.text("VKBENCH_AOT_SMOKE").startswith("executorch.exir")
    sources = {name: source for name, _, source in settings.effective()}
    assert sources["VKBENCH_AOT_SMOKE"] == "default" and sources["VKBENCH_BUILD"] == "default"


def test_docs_table_is_generated_from_the_declarations():
    page = doc_sections.section_file("settings").read_text()
    assert settings.markdown() in page
