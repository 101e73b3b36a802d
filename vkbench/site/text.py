"""Wording shared by the pages."""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 step``, ``2 steps``; ``many`` where adding an ``s`` is wrong (``entries``)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
