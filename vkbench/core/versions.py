"""Versions of the measured stack, for records, cache keys and the ledger."""

from __future__ import annotations

import importlib.metadata as metadata
import platform


def public_version(version: str) -> str:
    """``1.5.1`` for ``1.5.1+cpu``: the version without its PEP 440 local label. The wheels of one release
    differ only there (``+cpu``, ``+cu130``), and the ledger, a policy survey and the pattern cache's key
    name the release, so all of them strip it this one way (a plain split, not ``packaging``'s
    normalising ``Version.public``: the cache key must stay byte-equal to the ones already written)."""
    return version.split("+")[0]


def dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def executorch_identity() -> dict[str, str | None]:
    """ExecuTorch's version and the upstream commit it was built from."""
    identity: dict[str, str | None] = {"version": dist_version("executorch"), "git_version": None}
    try:
        from executorch import version as et_version  # type: ignore[attr-defined]

        identity["version"] = getattr(et_version, "__version__", identity["version"])
        identity["git_version"] = getattr(et_version, "git_version", None)
    except Exception:  # noqa: BLE001 - old releases have no version module
        pass
    return identity


def stack_versions() -> dict[str, str | None]:
    """Versions that change what a lowering produces."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("torch", "executorch", "lerobot", "transformers", "asv"):
        versions[name] = dist_version(name)
    versions["executorch_git"] = executorch_identity()["git_version"]
    return versions
