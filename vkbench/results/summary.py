"""Print what the last ``vkbench record`` stored, read back from asv's results.

Reading the stored results (rather than re-measuring) makes the summary a
view of exactly what the site shows for the installed release.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.results.asv_files import read_dir
from vkbench.results.model import Params, ResultFile


def load_results(commit: str, machine: str, results_dir: Path) -> tuple[dict[str, dict[Params, Any]],
                                                                         list[str]]:
    """``{benchmark: {params: value}}`` of every file of ``commit`` on ``machine``, and read problems."""
    found = read_dir(results_dir)
    merged: dict[str, dict[Params, Any]] = {}
    files: list[ResultFile] = [f for f in found.files if f.machine == machine and f.commit.startswith(
        commit[:8])]
    for record in files:
        for name in record.results:
            merged[name] = record.values(name)
    return merged, [str(p) for p in found.problems if p.path.parent.name == machine]


def _shown(value: Any) -> str:
    if value is None:
        return "n/a"  # skipped or failed: `asv run -e` shows why
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def summarize(results: dict[str, dict[Params, Any]]) -> str:
    """One table per benchmark class: a row per parameter set, a column per benchmark."""
    blocks = []
    classes = sorted({name.rsplit(".", 1)[0] for name in results})
    for cls in classes:
        methods = sorted(name for name in results if name.rsplit(".", 1)[0] == cls)
        combos: dict[Params, dict[str, Any]] = {}
        for name in methods:
            for combo, value in results[name].items():
                combos.setdefault(combo, {})[name.rsplit(".", 1)[1]] = value
        headers = ["params"] + [m.rsplit(".", 1)[1] for m in methods]
        rows = [
            [", ".join(combo) or "-"] + [_shown(values.get(h)) for h in headers[1:]]
            for combo, values in combos.items()
        ]
        blocks.append(f"{cls.split('.', 1)[-1]}\n{tables.render(headers, rows)}")
    return "\n\n".join(blocks)


def summary(version: str, commit: str | None, git_version: str | None, machine: str,
            results_dir: Path) -> int:
    """Print the stored results of the release ``version`` (ledger ``commit``) on ``machine``."""
    if not commit:
        print(f"vkbench summary: executorch {version} has not been recorded; run `vkbench record`",
              file=sys.stderr)
        return 2
    results, problems = load_results(commit, machine, results_dir)
    for problem in problems:
        print(f"vkbench summary: skipped {problem}", file=sys.stderr)
    if not results:
        print(f"vkbench summary: no stored results for {version} on {machine}", file=sys.stderr)
        return 2
    print(f"executorch {version} (upstream {git_version}), ledger commit {commit[:8]}, machine {machine}")
    print(summarize(results))
    return 0
