"""Plain-text tables for the CLI (no dependency beyond the standard library)."""

from __future__ import annotations

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


def draw(as_markdown: bool) -> Callable[[Sequence[str], Sequence[Sequence[object]]], str]:
    """:func:`markdown` or :func:`render`: one switch for every command that prints a table."""
    return markdown if as_markdown else render
