"""On-disk cache of exported programs, so benchmarks time lowering, not export.

Programs are saved with ``torch.export.save`` under ``$VKBENCH_CACHE`` (default
``.asv/cache/exported`` in the vkbench checkout, an absolute path, because asv
runs benchmarks in a temporary directory), in a folder keyed by the torch and
lerobot versions and a digest of the policy builders' sources; a file per
entry. ExecuTorch is not in the key: ``torch.export`` does not involve it, so
every ExecuTorch commit of a history run reuses the same exported programs,
and an entry whose export fails (a data-dependent guard) fails for every
commit alike: the failure is cached too (``<entry>.export-failed.json``), so
no commit builds and traces it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import torch

from vkbench import settings
from vkbench.core.lowering import export_program
from vkbench.paths import ROOT, STATE


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


_PACKAGE = Path(__file__).resolve().parent


def _builders_digest() -> str:
    """Digest of the policy builders' sources: a changed builder must not reuse old programs."""
    digest = hashlib.sha1()
    for path in sorted(_PACKAGE.glob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:10]


def _default_base() -> Path:
    """``.asv/cache/exported`` in the checkout (editable install), else the user's cache dir."""
    if (ROOT / "pyproject.toml").is_file():
        return STATE / "cache" / "exported"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vkbench" / "exported"


def cache_dir() -> Path:
    base = settings.path("VKBENCH_CACHE") or _default_base()
    dists = ("torch", "lerobot", "transformers")
    key = "-".join(f"{dist}{_version(dist)}" for dist in dists) + f"-src{_builders_digest()}"
    return base / re.sub(r"[^\w.+-]", "_", key)


def cache_path(entry_name: str) -> Path:
    return cache_dir() / (re.sub(r"[^\w.-]", "_", entry_name) + ".pt2")


def _failure_path(entry_name: str) -> Path:
    return cache_path(entry_name).with_suffix(".export-failed.json")


def load_export_failure(entry_name: str) -> tuple[str, str] | None:
    """``(error_type, first_line)`` of a cached export failure of ``entry_name``, or ``None``."""
    try:
        data = json.loads(_failure_path(entry_name).read_text())
        return str(data["error_type"]), str(data["error"])
    except (OSError, ValueError, KeyError):
        return None


def save_export_failure(entry_name: str, error_type: str, first_line: str) -> None:
    """Remember that ``torch.export`` of ``entry_name`` fails (best effort, like the programs)."""
    path = _failure_path(entry_name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"error_type": error_type, "error": first_line}))
    except OSError:
        pass


def load_exported(entry_name: str) -> Any | None:
    """The cached program of ``entry_name``, or ``None`` (missing or unreadable)."""
    path = cache_path(entry_name)
    if not path.is_file():
        return None
    try:
        return torch.export.load(str(path))
    except Exception:  # noqa: BLE001 - a stale or torn file is a cache miss
        return None


def save_exported(entry_name: str, exported: Any) -> Path | None:
    """Save ``exported``; returns the path, or ``None`` if it cannot be saved."""
    path = cache_path(entry_name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        torch.export.save(exported, str(tmp))
        tmp.replace(path)
        return path
    except Exception:  # noqa: BLE001 - caching is best effort
        return None


def exported_program(entry: Any, *, use_cache: bool = True) -> Any:
    """Export ``entry`` (an :class:`~vkbench.workloads.policies.registry.Entry`), through the cache.

    Raises whatever the builder raises (a build failure) or ``LoweringError``
    with stage ``export``.
    """
    if use_cache:
        cached = load_exported(entry.name)
        if cached is not None:
            return cached
    module, inputs = entry.build()
    exported = export_program(module, inputs)
    if use_cache:
        save_exported(entry.name, exported)
    return exported
