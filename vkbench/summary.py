"""Print what the last ``vkbench record`` stored, read back from asv's results.

Reading the stored results (rather than re-measuring) makes the summary a
view of exactly what the site shows for the installed release.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

from vkbench import tables
from vkbench.ledger import RESULTS_DIR, load_manifest, machine_name
from vkbench.versions import executorch_identity


def _expand(entry: list[Any], columns: list[str]) -> list[tuple[tuple[str, ...], Any]]:
    """``[(param combination, value), ...]`` for one stored benchmark."""
    data = dict(zip(columns, entry, strict=False))
    values = data.get("result") or []
    params = data.get("params") or []
    combos = list(itertools.product(*params)) if params else [()]
    return [
        (tuple(str(p).strip("'") for p in combo), value) for combo, value in zip(combos, values, strict=False)
    ]


def load_results(commit: str, machine: str, results_dir: Path = RESULTS_DIR) -> dict[str, list]:
    merged: dict[str, list] = {}
    for path in sorted((results_dir / machine).glob(f"{commit[:8]}-*.json")):
        data = json.loads(path.read_text())
        for name, entry in data.get("results", {}).items():
            merged[name] = _expand(entry, data["result_columns"])
    return merged


def _shown(value: Any) -> str:
    if value is None:
        return "n/a"  # skipped or failed: `asv run -e` shows why
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def summarize(results: dict[str, list]) -> str:
    """One table per benchmark class: a row per parameter set, a column per benchmark."""
    blocks = []
    classes = sorted({name.rsplit(".", 1)[0] for name in results})
    for cls in classes:
        methods = sorted(name for name in results if name.rsplit(".", 1)[0] == cls)
        combos: dict[tuple[str, ...], dict[str, Any]] = {}
        for name in methods:
            for combo, value in results[name]:
                combos.setdefault(combo, {})[name.rsplit(".", 1)[1]] = value
        headers = ["params"] + [m.rsplit(".", 1)[1] for m in methods]
        rows = [
            [", ".join(combo) or "-"] + [_shown(values.get(h)) for h in headers[1:]]
            for combo, values in combos.items()
        ]
        blocks.append(f"{cls.split('.', 1)[-1]}\n{tables.render(headers, rows)}")
    return "\n\n".join(blocks)


def main() -> int:
    version = executorch_identity()["version"]
    release = next((r for r in load_manifest() if r.version == version), None)
    if release is None or not release.commit:
        print(
            f"vkbench summary: executorch {version} has not been recorded; run `vkbench record`",
            file=sys.stderr,
        )
        return 2
    results = load_results(release.commit, machine_name())
    if not results:
        print(f"vkbench summary: no stored results for {version} on {machine_name()}", file=sys.stderr)
        return 2
    print(
        f"executorch {version} (upstream {release.git_version}), ledger commit {release.commit[:8]}, "
        f"machine {machine_name()}"
    )
    print(summarize(results))
    return 0
