"""``vkbench bugs``: every distinct failure, its owner, what it blocks, its probe and reproducer.

Read from the committed results (:mod:`vkbench.results.bug_rows`); nothing is lowered. ``--json`` prints an
object: ``rows``, a list of objects (``id``, ``stage``, ``error``, ``owner``, ``entries``, ``probe``,
``repro``, ``first_bad``, ``fixed_in``, then the extra keys), and ``runtime_dates``, what the listed
runtime rows' dates amount to (:class:`~vkbench.results.bug_rows.RuntimeDates`: how many predate the range,
how many are open at the newest recorded runtime commit, which commit that is, how many the runtime
history holds); the table shows one line per row, the rows per owner under it, then that sentence.

``vkbench pattern-cache`` (registered here: it is the what-if of the bug list's performance row
``partition_reexports_pattern_graphs``) partitions ``Blocks(n)`` with and without ExecuTorch's
pattern-graph cache working, interleaved, and stores the samples in ``results/history/pattern-cache.json``
(:mod:`vkbench.results.pattern_cache`); ``--show`` prints the stored table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench import tables
from vkbench.cli.common import Subparsers, UsageError, add_format_options

HEADERS = ["id", "kind", "owner", "stage", "entries", "probe", "repro", "first bad", "fixed in"]


def add_parser(sub: Subparsers) -> None:
    """Add ``bugs`` to the ``vkbench`` parser."""
    bugs = sub.add_parser("bugs", help="the bug list: each distinct failure, owner, blocked entries, probe, "
                                       "reproducer", description=__doc__.splitlines()[0])
    bugs.add_argument("--owner", help="only rows whose owner contains this (case-insensitive): 'vulkan', "
                                      "'exir', 'partitioner'")
    bugs.add_argument("--results", type=Path, help="results folder (default: the checkout's results/)")
    add_format_options(bugs)
    recording = bugs.add_argument_group("recording the reproducers on a build (runtime rows need Vulkan)")
    recording.add_argument("--run-repros", action="store_true",
                           help="run every repro/*.py with --python; write "
                                "results/bugs/repro-runs-<machine>.json")
    recording.add_argument("--python", default=sys.executable,
                           help="the build's interpreter (e.g. .venv-vulkan-off/bin/python)")
    recording.add_argument("--machine",
                           help="record name: device and build (lavapipe-x86_64-2core-tracer-off)")
    recording.add_argument("--only", nargs="+", metavar="ID",
                           help="run only these rows' reproducers and add their runs to the machine's "
                                "record (each keeps its date and where its build differs)")
    bugs.set_defaults(run=_bugs)
    what_if = sub.add_parser(
        "pattern-cache", help="what-if of the bug row partition_reexports_pattern_graphs: Blocks(n) "
                              "partition time with ExecuTorch's pattern-graph cache working",
        description="Partition Blocks(n) as shipped and with each registered pattern's get_graphs_fn "
                    "cached (restored afterwards), interleaved: CPU seconds and torch.export calls per "
                    "partition.")
    what_if.add_argument("--blocks", type=int, nargs="+", default=[50, 100, 200], metavar="N",
                         help="Blocks(n) sizes (default: 50 100 200)")
    what_if.add_argument("--rounds", type=int, default=3,
                         help="partitions per side and size, the sides alternating (default: 3)")
    what_if.add_argument("--output", type=Path,
                         help="where to store it (default: results/history/pattern-cache.json)")
    what_if.add_argument("--show", action="store_true",
                         help="print the stored what-if (--output names another file); measure nothing")
    add_format_options(what_if)
    what_if.set_defaults(run=_pattern_cache)


def _bugs(args: argparse.Namespace) -> int:
    if args.run_repros:
        if not args.machine:
            raise UsageError("--run-repros needs --machine (the device and build the record is for)")
        return run_repros(args.python, args.machine, args.only)
    return bugs(owner=args.owner, results=args.results, as_json=args.json, markdown=args.markdown)


def _pattern_cache(args: argparse.Namespace) -> int:
    from vkbench.results import pattern_cache

    path = args.output or pattern_cache.PATH
    if args.show:
        if not path.is_file():
            raise UsageError(f"no stored what-if at {path} (run `vkbench pattern-cache`)")
        try:
            found = pattern_cache.read(path)
        except ValueError as error:
            raise UsageError(str(error)) from None
    else:
        if args.rounds < 1 or any(n < 1 for n in args.blocks):
            raise UsageError("--rounds and --blocks must be at least 1")
        from vkbench.runs.ledger import machine_name

        found = pattern_cache.measure(tuple(args.blocks), args.rounds, machine_name(),
                                      say=lambda line: print(line, file=sys.stderr, flush=True))
        print(f"written: {pattern_cache.write(found, path)}", file=sys.stderr)
    if args.json:
        print(json.dumps(found.to_json(), indent=1))
        return 0
    print(tables.draw(args.markdown)(pattern_cache.HEADERS, pattern_cache.table(found)))
    print(pattern_cache.caption(found))
    return 0


def run_repros(python: str, machine: str, only: list[str] | None = None) -> int:
    """Run every reproducer (or ``only`` these rows') with ``python``; print one line each and write the
    machine's record (``only``: merged into the record it has, whose other runs stay as they were)."""
    from vkbench.execution import repros
    from vkbench.results import repro_runs

    paths = None
    if only:
        paths = [repro_runs.REPRO / f"{name}.py" for name in only]
        if missing := [path.name for path in paths if not path.is_file()]:
            raise UsageError(f"no reproducer {', '.join(missing)} in {repro_runs.REPRO}")
    record = repros.run(python, machine, paths)
    ran = list(record.runs)
    if only:
        record = repro_runs.merge(repro_runs.read(machine), record)
    for name, run in ((name, record.runs[name]) for name in ran):
        seen = "reproduced" if run.reproduced else "NOT reproduced"
        print(f"{seen:15s} rc={run.rc:<4d} {run.seconds:6.1f}s {name}: {run.line[:110]}")
    print(f"written: {repro_runs.write(record)}")
    return 0


def bugs(*, owner: str | None = None, results: Path | None = None, as_json: bool = False,
         markdown: bool = False) -> int:
    """Print the bug list; ``owner`` keeps the rows whose owner contains it (case-insensitive)."""
    from vkbench.paths import RESULTS_ROOT
    from vkbench.results.bug_rows import bug_rows, owner_counts, runtime_summary
    from vkbench.results.records import read_recorded

    root = results or RESULTS_ROOT
    if not root.is_dir():
        raise UsageError(f"--results: no such folder: {root}")
    recorded = read_recorded(root)
    for problem in recorded.problems:  # an unreadable survey or ledger would silently empty rows
        print(f"vkbench bugs: skipped {problem}", file=sys.stderr)
    rows = bug_rows(recorded)
    if owner:
        rows = [row for row in rows if owner.lower() in row.owner.lower()]
        if not rows:
            raise UsageError(f"--owner: no row is owned by {owner!r}")
    dates = runtime_summary(rows, recorded)
    if as_json:
        listed = {"rows": [row.to_json() for row in rows], "runtime_dates": dates.to_json()}
        print(json.dumps(listed, indent=2))
        return 0
    draw = tables.draw(markdown)
    table = [[row.id, row.kind, row.owner, row.stage, _entries(row.entries), row.probe or "-",
              row.repro or "-", row.first_bad or "-", row.fixed_in or "-"] for row in rows]
    print(draw(HEADERS, table))
    print()
    print(draw(["owner", "rows"], [[name, str(count)] for name, count in owner_counts(rows).items()]))
    if dates.rows:
        print()
        print(f"Runtime dates: {dates.sentence()}.")
    return 0


def _entries(entries: list[str]) -> str:
    if len(entries) <= 2:
        return ", ".join(entries) or "-"
    return f"{len(entries)}: {entries[0]}, {entries[1]}, …"
