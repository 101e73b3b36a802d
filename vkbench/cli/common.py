"""What every command group of :mod:`vkbench.cli` shares: usage error, output switch, classes table.

Kept apart from ``vkbench/cli/__init__.py`` so the group modules can import it
while the package imports them (no import cycle).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from vkbench import tables

if TYPE_CHECKING:
    from vkbench.commits.classes import Classes

#: Exit status for bad input (argparse's own).
EXIT_USAGE = 2

#: What ``add_subparsers()`` returns (a private argparse type), named once for every ``add_parser``.
Subparsers = argparse._SubParsersAction


class UsageError(Exception):
    """Bad input from the user: one line on stderr, exit 2."""


def add_format_options(parser: argparse.ArgumentParser) -> None:
    """``--json`` | ``--markdown``: the output choice every table-printing subcommand shares."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="one JSON document on stdout")
    group.add_argument("--markdown", action="store_true", help="a markdown table")


def print_classes(found: Classes, path: Path, args: argparse.Namespace, noun: str = "classes") -> None:
    """The classes of a range as JSON, or a table and where they were written (lowering or runtime tier)."""
    if args.json:
        print(json.dumps(found.to_json(), indent=1))
        return
    rows = [[i, c.first[:8], len(c.commits), c.base,
             ", ".join(c.changed[:3]) + (" ..." if len(c.changed) > 3 else ""), c.subject[:60]]
            for i, c in enumerate(found.classes)]
    print(tables.draw(args.markdown)(
        ["class", "first", "commits", "base", "inputs changed", "subject"], rows))
    print(f"{sum(len(c.commits) for c in found.classes)} commits in {len(found.classes)} {noun}; "
          f"written to {path}")
