"""Plain-text tables for the CLI (no dependency beyond the standard library)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def cell(value: object) -> str:
    """One markdown table cell: pipes escaped, line breaks flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def line(values: Sequence[object]) -> str:
        return "| " + " | ".join(cell(v) for v in values) + " |"

    return "\n".join([line(headers), line(["---"] * len(headers))] + [line(row) for row in rows])


def add_format_options(parser: argparse.ArgumentParser) -> None:
    """``--json`` | ``--markdown``: the output choice every table-printing subcommand shares."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="one JSON document on stdout")
    group.add_argument("--markdown", action="store_true", help="a markdown table")


def draw(args: argparse.Namespace) -> Callable[[Sequence[str], Sequence[Sequence[object]]], str]:
    """:func:`markdown` or :func:`render`, as the parsed ``--markdown`` asks."""
    return markdown if getattr(args, "markdown", False) else render
