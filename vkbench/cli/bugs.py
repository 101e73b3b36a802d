"""``vkbench bugs``: every distinct failure, its owner, what it blocks, its probe and reproducer.

Read from the committed results (:mod:`vkbench.results.bugs`); nothing is lowered. ``--json`` prints a
list of objects (``id``, ``stage``, ``error``, ``owner``, ``entries``, ``probe``, ``repro``,
``first_bad``, ``fixed_in``, then the extra keys); the table shows one line per row and the rows per
owner under it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vkbench import tables
from vkbench.cli.common import Subparsers, UsageError, add_format_options

HEADERS = ["id", "owner", "stage", "entries", "probe", "repro", "first bad", "fixed in"]


def add_parser(sub: Subparsers) -> None:
    """Add ``bugs`` to the ``vkbench`` parser."""
    bugs = sub.add_parser("bugs", help="the bug list: each distinct failure, owner, blocked entries, probe, "
                                       "reproducer", description=__doc__.splitlines()[0])
    bugs.add_argument("--owner", help="only rows whose owner contains this (case-insensitive): 'vulkan', "
                                      "'exir', 'partitioner'")
    bugs.add_argument("--results", type=Path, help="results folder (default: the checkout's results/)")
    add_format_options(bugs)
    bugs.set_defaults(run=_bugs)


def _bugs(args: argparse.Namespace) -> int:
    return bugs(owner=args.owner, results=args.results, as_json=args.json, markdown=args.markdown)


def bugs(*, owner: str | None = None, results: Path | None = None, as_json: bool = False,
         markdown: bool = False) -> int:
    """Print the bug list; ``owner`` keeps the rows whose owner contains it (case-insensitive)."""
    from vkbench.paths import RESULTS_ROOT
    from vkbench.results.bugs import bug_rows, owner_counts

    root = results or RESULTS_ROOT
    if not root.is_dir():
        raise UsageError(f"--results: no such folder: {root}")
    rows = bug_rows(root)
    if owner:
        rows = [row for row in rows if owner.lower() in row.owner.lower()]
        if not rows:
            raise UsageError(f"--owner: no row is owned by {owner!r}")
    if as_json:
        print(json.dumps([row.to_json() for row in rows], indent=2))
        return 0
    draw = tables.draw(markdown)
    table = [[row.id, row.owner, row.stage, _entries(row.entries), row.probe or "-", row.repro or "-",
              row.first_bad or "-", row.fixed_in or "-"] for row in rows]
    print(draw(HEADERS, table))
    print()
    print(draw(["owner", "rows"], [[name, str(count)] for name, count in owner_counts(rows).items()]))
    return 0


def _entries(entries: list[str]) -> str:
    if len(entries) <= 2:
        return ", ".join(entries) or "-"
    return f"{len(entries)}: {entries[0]}, {entries[1]}, …"
