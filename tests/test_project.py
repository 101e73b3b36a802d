"""Project wiring: CI runs the README's test command; the asv suite is discoverable."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^(bash scripts/test)\b.*$", readme, re.M)
    assert command, "README lost its test command"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(rf"^{re.escape(command.group(1))}\b", ci, re.M)
    assert "set -euo pipefail" in ci  # pytest's exit 5 (no tests) fails CI


def test_benchmark_modules_define_lower_is_better_tracks():
    sys.path.insert(0, str(ROOT))
    try:
        for name in ("bench_probes", "bench_partition", "bench_policies"):
            module = importlib.import_module(f"benchmarks.{name}")
            classes = [c for n, c in inspect.getmembers(module, inspect.isclass)
                       if c.__module__ == module.__name__ and not n.startswith("_")]
            assert classes, name
            for cls in classes:
                methods = [m for m in dir(cls) if m.split("_")[0] in {"time", "track", "peakmem"}]
                assert methods, cls
                assert len(cls.params) == len(cls.param_names)
    finally:
        sys.path.remove(str(ROOT))


def test_asv_discovers_the_suite(tmp_path):
    """``asv check`` imports every benchmark with this interpreter."""
    config = json.loads(json.dumps({
        "version": 1, "project": "vkbench-check", "repo": str(ROOT), "branches": ["HEAD"],
        "environment_type": "virtualenv",
        "benchmark_dir": str(ROOT / "benchmarks"), "env_dir": str(tmp_path / "env"),
        "results_dir": str(tmp_path / "results"), "html_dir": str(tmp_path / "html"),
    }))
    path = tmp_path / "asv.conf.json"
    path.write_text(json.dumps(config))
    done = subprocess.run([sys.executable, "-m", "asv", "check", "--config", str(path),
                           "-E", f"existing:{sys.executable}"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout


def test_every_config_vkbench_writes_forks_from_a_preimported_suite(tmp_path, monkeypatch):
    """asv's forkserver (suite imported once) in the shipped config and every config derived from it."""
    from asv.util import load_json

    from vkbench.build.hooks import write_full_conf
    from vkbench.runs import ledger
    from vkbench.runs.upstream_asv import write_config

    monkeypatch.setattr(ledger, "LEDGER_CONFIG", tmp_path / "releases.conf.json")  # not the checkout's .asv

    shipped = load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    assert shipped["launch_method"] == "forkserver"
    assert write_full_conf(tmp_path / "full.conf.json") == tmp_path / "full.conf.json"
    upstream = write_config(tmp_path / "upstream.conf.json")
    for path in (tmp_path / "full.conf.json", upstream, ledger.write_ledger_config()):
        assert json.loads(path.read_text())["launch_method"] == "forkserver", path


def test_docs_sections_each_live_in_one_file_and_refresh_in_place(tmp_path):
    from vkbench.runs import doc_sections

    for name in doc_sections.SECTIONS:  # every generated section has a home in docs/
        assert doc_sections.section_file(name).parent.name == "docs", name
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "suite.md"
    page.write_text("# x\n<!-- vkbench:probes -->\nold\n<!-- /vkbench:probes -->\ntail\n")
    assert doc_sections.write("probes", "| new |\n", root=tmp_path) == page
    assert page.read_text() == ("# x\n<!-- vkbench:probes -->\n`vkbench probe --markdown`:\n\n| new |\n\n"
                                "<!-- /vkbench:probes -->\ntail\n")
    with pytest.raises(KeyError, match="runtime"):
        doc_sections.section_file("runtime", root=tmp_path)


def test_readme_stays_short_and_links_every_doc():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for page in (ROOT / "docs").glob("*.md"):
        assert f"docs/{page.name}" in readme, page.name
