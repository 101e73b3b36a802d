"""The failure key: one failure reads the same at every commit, in every run, in every table.

A failed point's reason is stored as its stage and first error line (the sidecar's ``failures``).
The raw line carries what changes from run to run though the failure does not: the run's temporary
directories, the interpreter's ``site-packages`` folder (asv makes one per commit), the names and
order of torch's unbacked symbols, and the memory addresses of the objects it prints
(``<FakeTensorMode object at 0x7f2e...>``). :func:`normalize_error` removes them. Recording applies
it when it stamps a sidecar, the sidecar reader again when it reads one (it is idempotent, so keys
stored before a mask existed group with the new ones and no stored file is rewritten), and the bug
list to the survey's blocks, so ``vkbench changes``, ``vkbench bugs`` and the dashboard key the same
failure alike and can be joined.
"""

from __future__ import annotations

import re

#: What differs between occurrences of the same failure, and what it reads as. Order matters: a set
#: of unbacked symbols collapses before single symbols are masked. No replacement matches any
#: pattern, so normalizing twice changes nothing.
_VARYING = (
    (re.compile(r"/tmp/tmp[\w-]+"), "<tmp>"),
    (re.compile(r"[^\s'\"]*/lib/python[\d.]+/site-packages/"), "site-packages/"),
    (re.compile(r"\{u\d+(?:, u\d+)*\}"), "{u…}"),
    (re.compile(r"\bu\d+\b"), "u…"),
    (re.compile(r"\b0x[0-9a-fA-F]+"), "0x…"),
)


def normalize_error(stage: str, error: str) -> str:
    """The failure's key: the first line, without a repeated ``<stage>: `` prefix or what varies
    between runs (temp dirs, site-packages paths, unbacked symbol names, memory addresses)."""
    line = error.strip().splitlines()[0] if error.strip() else ""
    while stage and line.startswith(f"{stage}: "):
        line = line[len(stage) + 2:]
    for pattern, replacement in _VARYING:
        line = pattern.sub(replacement, line)
    return line


def block_key(block: str) -> tuple[str, str]:
    """``(stage, key)`` of a block written ``stage: Type: message`` (the policy survey's form)."""
    stage, _, error = block.partition(": ")
    return stage, normalize_error(stage, error)
