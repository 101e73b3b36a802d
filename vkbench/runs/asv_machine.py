"""asv's machine file: every vkbench command that records registers its machine name there first.

``asv run`` asks about an unknown machine on a tty and refuses without one, so a recording started
by vkbench (``upstream``, ``history confirm``, ``runtime record``, the release ledger) would stop
before measuring anything. :func:`ensure` writes the entry (``asv machine --yes``) only when the
file lacks it. ``HOME`` in ``env`` says whose file: tests point it into a temporary directory.

Every ``asv run`` also rewrites that file at its start (``Machine.load`` saves what it read, opening
the file for writing, which empties it first), so a second asv process starting at that moment reads
an empty file and stops ("Run asv at the console the first time ..."): it happened to a lane of
``vkbench gate`` in CI. :func:`own_home` gives each asv process vkbench starts a home of its own,
holding a copy of the file and links to everything else in the real home (caches, git settings).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from vkbench.paths import ROOT

#: asv's machine file, in the home directory.
FILE = ".asv-machine.json"


def _home(env: Mapping[str, str] | None) -> Path:
    return Path((env or {}).get("HOME") or str(Path.home()))


def known(machine: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``$HOME/.asv-machine.json`` (``HOME`` of ``env``, else ours) describes ``machine``."""
    try:
        return machine in json.loads((_home(env) / FILE).read_text())
    except (OSError, ValueError):
        return False


def ensure(config: Path, machine: str, env: Mapping[str, str] | None = None) -> None:
    """Register ``machine`` with asv (config ``config``) unless it is known; raises when asv fails."""
    if not known(machine, env):
        command = [sys.executable, "-m", "asv", "machine", "--config", str(config), "--yes",
                   "--machine", machine]
        subprocess.run(command, cwd=ROOT, env=dict(env) if env is not None else None, check=True,
                       stdout=subprocess.DEVNULL)


@contextmanager
def own_home(env: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """``env`` (else ours) for one asv process, ``HOME`` a temporary folder with a copy of the machine
    file (register the machine first: :func:`ensure`) and a link to every other entry of the real home,
    so the process rewrites only its own copy (no asv process started beside it reads a half-written
    file) and finds the same caches and settings. The folder goes when the block ends."""
    real = _home(env)
    with tempfile.TemporaryDirectory(prefix="vkbench-asv-home-") as folder:
        home = Path(folder)
        for entry in real.iterdir() if real.is_dir() else ():
            if entry.name != FILE:
                (home / entry.name).symlink_to(entry)
        if (real / FILE).is_file():
            shutil.copyfile(real / FILE, home / FILE)
        yield {**(os.environ if env is None else env), "HOME": str(home)}
