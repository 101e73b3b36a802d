"""Guarded imports, so the suite imports against any ExecuTorch commit.

asv imports every benchmark module for every commit it measures. An old
commit may lack the Vulkan partitioner (or a helper we time), and that must
skip the affected benchmarks rather than break discovery of the whole suite
(the same idea as scipy's ``safe_import``).
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType


class Missing:
    """Stand-in for a module that failed to import; raises on first use."""

    def __init__(self, name: str, error: BaseException) -> None:
        self._name = name
        self._error = error

    def __getattr__(self, attr: str):
        raise NotImplementedError(
            f"{self._name} is unavailable: {type(self._error).__name__}: {self._error}"
        )

    def __bool__(self) -> bool:
        return False


def safe_import(name: str) -> ModuleType | Missing:
    """Import ``name`` or return a falsy :class:`Missing` that explains why."""
    level = logging.getLogger().level
    try:
        return importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - any import failure means "skip"
        return Missing(name, error)
    finally:
        # The Vulkan partitioner sets the root logger to INFO on import and then
        # logs one line per skipped node; keep whatever level the caller had.
        logging.getLogger().setLevel(level)


def require(module: ModuleType | Missing) -> ModuleType:
    """Return ``module`` or raise ``NotImplementedError`` (asv's "skip")."""
    if isinstance(module, Missing):
        raise NotImplementedError(
            f"{module._name} is unavailable: {type(module._error).__name__}: {module._error}"
        )
    assert isinstance(module, ModuleType)
    return module
