"""asv's machine file: every vkbench command that records registers its machine name there first.

``asv run`` asks about an unknown machine on a tty and refuses without one, so a recording started
by vkbench (``upstream``, ``history confirm``, ``runtime record``, the release ledger) would stop
before measuring anything. :func:`ensure` writes the entry (``asv machine --yes``) only when the
file lacks it. ``HOME`` in ``env`` says whose file: tests point it into a temporary directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from vkbench.paths import ROOT


def known(machine: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``$HOME/.asv-machine.json`` (``HOME`` of ``env``, else ours) describes ``machine``."""
    home = (env or {}).get("HOME") or str(Path.home())
    try:
        return machine in json.loads((Path(home) / ".asv-machine.json").read_text())
    except (OSError, ValueError):
        return False


def ensure(config: Path, machine: str, env: Mapping[str, str] | None = None) -> None:
    """Register ``machine`` with asv (config ``config``) unless it is known; raises when asv fails."""
    if not known(machine, env):
        command = [sys.executable, "-m", "asv", "machine", "--config", str(config), "--yes",
                   "--machine", machine]
        subprocess.run(command, cwd=ROOT, env=dict(env) if env is not None else None, check=True,
                       stdout=subprocess.DEVNULL)
