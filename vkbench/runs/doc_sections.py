"""Regenerate the measured tables in ``docs/`` (and README) from the tool's own output.

Sections between ``<!-- vkbench:NAME -->`` and ``<!-- /vkbench:NAME -->``
are replaced by the output of the matching ``vkbench`` command, so the
tables are produced by the tool, never typed by hand. Each section lives in
exactly one Markdown file; ``vkbench docs [NAME ...]`` finds it there.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.paths import ROOT
from vkbench.results.surveys import read_survey

#: Section name -> the ``vkbench`` arguments whose stdout fills it.
SECTIONS: dict[str, list[str]] = {
    "probes": ["probe", "--markdown"],
    "partition": ["partition", "--blocks", "50", "100", "200", "400", "--markdown"],
    "policies": ["policies", "--markdown"],
    "doctor": ["doctor"],
    "settings": ["doctor", "--settings"],
    "runtime": ["runtime", "--markdown"],
    "ladder": ["runtime", "ladder", "--markdown"],
}


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- vkbench:{name} -->\n).*?(<!-- /vkbench:{name} -->)", re.S)


def section_file(name: str, root: Path = ROOT) -> Path:
    """The one Markdown file (README.md or docs/*.md) holding section ``name``."""
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        if path.is_file() and _pattern(name).search(path.read_text()):
            return path
    raise KeyError(f"no README.md or docs/*.md has a section {name!r}")


def refresh(text: str, name: str, output: str) -> str:
    """``text`` with section ``name`` replaced by ``output`` under the command that made it."""
    pattern = _pattern(name)
    if not pattern.search(text):
        raise KeyError(f"text has no section {name!r}")
    command = " ".join(["vkbench", *SECTIONS[name]])
    body = f"`{command}`:\n\n" + (output if name != "doctor" else f"```\n{output.rstrip()}\n```") + "\n"
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


#: The two shares' one-line definitions, under the table that shows both (the dashboard says the same).
SHARE_DEFINITIONS = (
    "*vkbench's share*: `call_function` nodes of the lowered edge graph inside the Vulkan delegates over all "
    "of them (`getitem` and the delegate calls are plumbing, not counted). *ExecuTorch's share*: "
    "`get_delegation_info`'s `num_delegated_nodes` over delegated + `num_non_delegated_nodes` (it counts "
    "`getitem` nodes too, not the delegate calls); empty for a row recorded before vkbench took it."
)


def shares_markdown(rows: list[dict[str, Any]]) -> str:
    """Both shares of every lowered entry of a saved survey, side by side."""
    body = []
    for row in rows:
        c = row.get("coverage") or {}
        if row.get("status") != "lowered" or not c:
            continue
        total, delegated = c.get("nodes_total", 0), c.get("nodes_delegated", 0)
        et, non = c.get("et_delegated_nodes"), c.get("et_non_delegated_nodes")
        et_cells = ["", ""] if et is None or non is None else [
            f"{et:,} / {et + non:,}", f"{100 * et / (et + non):.1f} %" if et + non else "n/a"]
        body.append([row["entry"], f"{delegated:,} / {total:,}",
                     f"{100 * delegated / total:.1f} %" if total else "n/a", *et_cells])
    header = ["entry", "vkbench: on Vulkan / nodes", "vkbench's share", "ExecuTorch: delegated / counted",
              "ExecuTorch's share"]
    table = tables.markdown(header, body)
    return f"### Both shares per lowered entry\n\n{table}\n\n{SHARE_DEFINITIONS}"


def policies_from_json(path: Path) -> str:
    """The policies section rendered from a saved ``vkbench policies --json`` document (its one reader,
    :func:`vkbench.results.surveys.read_survey`, reads it), then both shares per lowered entry."""
    from vkbench.workloads.policies import Row, format_markdown

    survey = read_survey(path)
    rows = [Row(**row) for row in survey.rows]
    return format_markdown(rows) + "\n\n" + shares_markdown(survey.rows) + f"\n\n(from `{path}`)\n"


def write(name: str, output: str, root: Path = ROOT) -> Path:
    path = section_file(name, root)
    path.write_text(refresh(path.read_text(), name, output))
    return path


def main(names: list[str], policies_json: Path | None = None) -> int:
    """Refresh ``names`` (default: all); ``policies_json`` renders policies without re-lowering."""
    if policies_json is not None:
        write("policies", policies_from_json(policies_json))
        names = [name for name in names if name != "policies"]
        if not names:
            return 0
    for name in names or list(SECTIONS):
        print(f"vkbench docs: running {' '.join(SECTIONS[name])}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", "vkbench", *SECTIONS[name]], capture_output=True,
                              text=True, check=True)
        write(name, done.stdout.rstrip() + "\n")  # section by section: a later failure keeps earlier output
    return 0
