"""Shared, session-scoped lowerings: each program is exported and lowered once."""

from __future__ import annotations

import logging
import os
import warnings

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
warnings.filterwarnings("ignore", category=FutureWarning)


@pytest.fixture(scope="session")
def probe_coverage():
    """Coverage of every seed probe through vkbench's lowering path."""
    from vkbench.lowering import lower
    from vkbench.probes import PROBES, build_probe

    logging.getLogger().setLevel(logging.WARNING)
    results = {}
    for name in PROBES:
        module, inputs = build_probe(name)
        results[name] = lower(module, inputs)[0]
    return results
