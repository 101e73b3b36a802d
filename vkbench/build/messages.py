"""How the ``aot`` build speaks in asv's build log: progress lines, and a failure as one line.

asv shows a build's stderr and goes on to the next commit when it fails. A commit that cannot be
built on a release wheel (its Python needs newer native parts, no release fits, the index is
unreachable) must say why in one line, so every step raises :class:`AotError` with a one-line
message and the command that ran the build prints it after ``FAILED:``.
"""

from __future__ import annotations

import sys


class AotError(RuntimeError):
    """A build that cannot succeed for this commit; the message is one line."""


def log(message: str) -> None:
    """One line on stderr, prefixed so it stands out among asv's own lines."""
    print(f"vkbench.build aot: {message}", file=sys.stderr, flush=True)
