"""What tests that build small git repos in tmp share: a git that reads no user config, a base chooser."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: The release wheel a commit's ``version.txt`` (major.minor) would be overlaid on.
RELEASES = {"1.4": "1.4.1", "1.5": "1.5.1"}


def base_for(version: str | None) -> str:
    """The base release of a commit's version, as ``vkbench.build.base_release.base_chooser()`` answers."""
    return RELEASES[".".join((version or "1.5").split(".")[:2])]


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS`` with a fixed identity and no global or system config; its stdout."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()
