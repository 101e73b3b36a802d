"""The one reader (and writer) of asv's result files.

Nothing else in vkbench parses ``result_columns`` or expands a parameter
product: consumers get :class:`~vkbench.results.model.ResultFile` records.
A file that cannot be read (truncated by a killed job, merged from a job
matrix without its columns, not JSON at all) becomes one
:class:`~vkbench.results.model.ReadProblem` naming the file and what is
wrong; every other file is still read, and no file is rewritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vkbench.results import sidecar
from vkbench.results.model import (
    STAT_COLUMNS,
    BenchmarkResult,
    ReadProblem,
    ResultFile,
    ResultSet,
)

#: Files of a results directory that are not per-commit results.
NOT_RESULTS = {"machine.json", "benchmarks.json"}
#: The columns vkbench maps onto :class:`BenchmarkResult` fields.
_FIELDS = ("result", "params", "version", "started_at", "duration")


class ResultFileError(ValueError):
    """An asv result file that cannot be read; ``str()`` is one line naming it."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ResultFileError(path, f"not valid JSON ({error.msg} at line {error.lineno} column "
                                    f"{error.colno}; truncated?)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResultFileError(path, f"unreadable ({type(error).__name__}: {error})") from None


def _benchmark(name: str, row: list[Any], columns: list[str]) -> BenchmarkResult:
    data = dict(zip(columns, row, strict=False))
    values = data.get("result")
    values = values if isinstance(values, list) else [values]
    return BenchmarkResult(
        name=name, params=[list(map(str, p)) for p in data.get("params") or []], values=values,
        version=data.get("version"), started_at=data.get("started_at"), duration=data.get("duration"),
        stats={c: data[c] for c in STAT_COLUMNS if data.get(c) is not None},
        extra={c: v for c, v in data.items() if c not in _FIELDS and c not in STAT_COLUMNS})


def read_file(path: Path) -> ResultFile:
    """One asv result file as a record; :class:`ResultFileError` when it cannot be read."""
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, dict):
        raise ResultFileError(path, f"not an asv result file (top level is {type(data).__name__})")
    columns = data.get("result_columns")
    if not isinstance(columns, list):
        raise ResultFileError(path, "not an asv 0.6 result file (no result_columns)")
    rows = data.get("results")
    if not isinstance(rows, dict):
        raise ResultFileError(path, "not an asv result file (no results object)")
    try:
        results = {name: _benchmark(name, row, columns) for name, row in rows.items()}
    except (TypeError, AttributeError) as error:
        raise ResultFileError(path, f"malformed results ({error})") from None
    document = {k: v for k, v in data.items() if k not in ("results", "result_columns")}
    return ResultFile(path=path, machine=path.parent.name, commit=str(data.get("commit_hash") or ""),
                      date=int(data.get("date") or 0), env_name=str(data.get("env_name") or ""),
                      results=results, durations=dict(data.get("durations") or {}), columns=columns,
                      document=document, sidecar=sidecar.read(path))


def result_paths(root: Path) -> list[Path]:
    """Every per-commit result file under ``root/<machine>/``."""
    return sorted(p for p in Path(root).glob("*/*.json") if p.name not in NOT_RESULTS)


def read_dir(root: Path) -> ResultSet:
    """Every result file of an asv results directory; unreadable ones become problems, not errors."""
    root = Path(root)
    files, problems = [], []
    for path in result_paths(root):
        try:
            files.append(read_file(path))
        except ResultFileError as error:
            problems.append(ReadProblem(path, error.message))
    benchmarks: dict[str, Any] = {}
    listing = root / "benchmarks.json"
    if listing.is_file():
        try:
            loaded = _load_json(listing)
            benchmarks = {k: v for k, v in loaded.items() if isinstance(v, dict)}
        except ResultFileError as error:
            problems.append(ReadProblem(listing, error.message))
    machines = {}
    for machine_json in sorted(root.glob("*/machine.json")):
        try:
            machines[machine_json.parent.name] = _load_json(machine_json)
        except ResultFileError as error:
            problems.append(ReadProblem(machine_json, error.message))
    return ResultSet(root, files, problems, benchmarks, machines)


def _row(result: BenchmarkResult, columns: list[str]) -> list[Any]:
    data = {"result": result.values, "params": result.params, "version": result.version,
            "started_at": result.started_at, "duration": result.duration, **result.stats, **result.extra}
    row = [data.get(c) for c in columns]
    while row and row[-1] is None:
        row.pop()
    return row


def write_file(record: ResultFile, path: Path | None = None) -> Path:
    """Write a record back in asv's layout (its own columns, other fields untouched)."""
    target = Path(path or record.path)
    data = {**record.document, "commit_hash": record.commit, "env_name": record.env_name,
            "date": record.date, "durations": record.durations, "result_columns": record.columns,
            "results": {name: _row(result, record.columns) for name, result in record.results.items()}}
    target.write_text(json.dumps(data) + "\n")
    return target


def read_listing(root: Path) -> dict[str, dict[str, Any]]:
    """``benchmarks.json`` of a results directory ({} when absent)."""
    listing = Path(root) / "benchmarks.json"
    return _load_json(listing) if listing.is_file() else {}


def write_listing(root: Path, benchmarks: dict[str, Any]) -> None:
    (Path(root) / "benchmarks.json").write_text(json.dumps(benchmarks, indent=4, sort_keys=True) + "\n")


def without_unreadable(root: Path, scratch: Path) -> tuple[Path, list[ReadProblem]]:
    """``root`` itself when every file reads; else ``scratch``, a tree of links to all but the bad ones.

    asv's own ``publish`` stops at the first result file it cannot parse; handing it this tree
    publishes every other commit, while the bad files stay untouched where they are.
    """
    root = Path(root)
    found = read_dir(root)
    if not found.problems:
        return root, []
    bad = {p.path.resolve() for p in found.problems}
    if Path(scratch).exists():
        import shutil

        shutil.rmtree(scratch)
    for path in root.rglob("*"):
        if path.is_file() and path.resolve() not in bad:
            link = Path(scratch) / path.relative_to(root)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path.resolve())
    return Path(scratch), found.problems
