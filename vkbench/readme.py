"""Regenerate the README's measured tables from the tool's own output.

Sections between ``<!-- vkbench:NAME -->`` and ``<!-- /vkbench:NAME -->``
are replaced by the output of the matching ``vkbench`` command, so the
tables in the README are produced by the tool, never typed by hand.
``python -m vkbench.readme [NAME ...]`` refreshes the named sections.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
SECTIONS: dict[str, list[str]] = {
    "probes": ["probe", "--markdown"],
    "partition": ["partition", "--blocks", "50", "100", "200", "400", "--markdown"],
    "policies": ["policies", "--markdown"],
    "doctor": ["doctor"],
}


def refresh(text: str, name: str, output: str) -> str:
    pattern = re.compile(rf"(<!-- vkbench:{name} -->\n).*?(<!-- /vkbench:{name} -->)", re.S)
    if not pattern.search(text):
        raise KeyError(f"README has no section {name!r}")
    command = " ".join(["vkbench", *SECTIONS[name]])
    body = f"`{command}`:\n\n" + (output if name != "doctor" else f"```\n{output.rstrip()}\n```") + "\n"
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(SECTIONS)
    text = README.read_text()
    for name in names:
        print(f"vkbench readme: running {' '.join(SECTIONS[name])}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", "vkbench", *SECTIONS[name]], capture_output=True,
                              text=True, check=True)
        text = refresh(text, name, done.stdout.rstrip() + "\n")
    README.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
