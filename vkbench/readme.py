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
    "runtime": ["runtime", "--markdown"],
}


def refresh(text: str, name: str, output: str) -> str:
    pattern = re.compile(rf"(<!-- vkbench:{name} -->\n).*?(<!-- /vkbench:{name} -->)", re.S)
    if not pattern.search(text):
        raise KeyError(f"README has no section {name!r}")
    command = " ".join(["vkbench", *SECTIONS[name]])
    body = f"`{command}`:\n\n" + (output if name != "doctor" else f"```\n{output.rstrip()}\n```") + "\n"
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


def policies_from_json(path: Path) -> str:
    """The policies section rendered from a saved ``vkbench policies --json`` document."""
    import json

    from vkbench.policies import Row, format_markdown

    rows = [Row(**row) for row in json.loads(path.read_text())["rows"]]
    return format_markdown(rows)


def main(argv: list[str] | None = None) -> int:
    """``[--policies-json PATH] [NAME ...]``; the JSON saves re-lowering every policy."""
    args = list(argv if argv is not None else sys.argv[1:])
    text = README.read_text()
    if "--policies-json" in args:
        at = args.index("--policies-json")
        saved = Path(args[at + 1])
        del args[at : at + 2]
        text = refresh(text, "policies", policies_from_json(saved) + f"\n\n(from `{saved}`)\n")
        args = [name for name in args if name != "policies"]
        if not args:
            README.write_text(text)
            return 0
    names = args or list(SECTIONS)
    for name in names:
        print(f"vkbench readme: running {' '.join(SECTIONS[name])}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", "vkbench", *SECTIONS[name]], capture_output=True,
                              text=True, check=True)
        text = refresh(README.read_text(), name, done.stdout.rstrip() + "\n")
        README.write_text(text)  # section by section: a later failure keeps earlier output
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
