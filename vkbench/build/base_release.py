"""Which release wheel a commit's Python is laid over: the nearest one the index has.

The base's native parts must be what the commit's Python expects, so the base is picked from
the commit's ``version.txt`` among the releases with a wheel for this interpreter
(:func:`vkbench.build.index.available_releases`). The commit classes use the same choice: two
commits on different bases are never one class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from vkbench.build.index import available_releases
from vkbench.build.messages import AotError
from vkbench.build.wheels import default_wheelhouse
from vkbench.core.versions import public_version


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", public_version(version))[:3])


def checkout_version(checkout: Path) -> str | None:
    """The checkout's ``version.txt`` (None on commits without one)."""
    path = checkout / "version.txt"
    return path.read_text().strip() if path.exists() else None


def nearest_release(version: str | None, releases: Sequence[str]) -> str:
    """The release whose native parts best match a commit at ``version``.

    ``releases`` are the versions with a wheel pip can install here
    (:func:`~vkbench.build.index.available_releases`). ``X.Y.Z`` (a release commit) -> itself if
    available; ``X.Y.ZaN``/``X.Y.Z.devN`` (development towards X.Y), or an
    ``X.Y.Z`` the index lacks (there is no 1.3.0 wheel, only 1.3.1) -> the
    newest available ``X.Y.*`` release, since its native parts are a superset
    of what the line needed; with no such release yet (current main) -> the
    newest release before X.Y. A commit older than every release has no base:
    its native parts would be a newer line's, so :class:`AotError` says so.
    """
    if not releases:
        raise AotError("no executorch release with a wheel for this interpreter")
    ordered = sorted(releases, key=_vkey)
    if not version:
        return ordered[-1]
    clean = public_version(version)
    if clean in ordered:
        return clean
    major_minor = _vkey(clean)[:2]
    same_line = [r for r in ordered if _vkey(r)[:2] == major_minor]
    if same_line:
        return same_line[-1]
    older = [r for r in ordered if _vkey(r) < _vkey(clean)]
    if not older:
        raise AotError(f"no executorch release fits version {clean}: the oldest with a wheel "
                       f"for this interpreter is {ordered[0]}")
    return older[-1]


def base_chooser(wheelhouse: Path | None = None) -> Callable[[str | None], str]:
    """``version.txt`` -> the base release the build picks, over one listing of the index's releases."""
    releases = available_releases(wheelhouse or default_wheelhouse())
    return lambda version: nearest_release(version, releases)
