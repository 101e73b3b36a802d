"""Shared, session-scoped lowerings: each program is exported and lowered once."""

from __future__ import annotations

import importlib
import logging
import os
import sys
import warnings
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
warnings.filterwarnings("ignore", category=FutureWarning)


@pytest.fixture(scope="session")
def probe_coverage():
    """Coverage of every seed probe (not the upstream-bug repros) through vkbench's lowering path."""
    from vkbench.core.lowering import lower
    from vkbench.workloads.probes import PROBES, build_probe

    logging.getLogger().setLevel(logging.WARNING)
    results = {}
    for name in [name for name, probe in PROBES.items() if not probe.upstream_bug]:
        module, inputs = build_probe(name)
        results[name] = lower(module, inputs)[0]
    return results


@pytest.fixture(scope="session")
def load_benchmark():
    """Import a module of ``benchmarks/`` as asv does: the checkout on ``sys.path``, by package name."""
    root = str(Path(__file__).resolve().parent.parent)

    def load(name: str):
        sys.path.insert(0, root)
        try:
            return importlib.import_module(f"benchmarks.{name}")
        finally:
            sys.path.remove(root)

    return load
