"""Shared, session-scoped lowerings (each program is exported and lowered once) and the xdist layout.

``scripts/test`` runs the suite on two workers: ``-n 2 --dist loadscope --no-loadscope-reorder``.
Each worker runs its own session, so a module- or session-scoped fixture is built once per worker
that runs one of its tests; ``loadscope`` sends a test file's tests to one worker, so each is built
once (a session fixture here, like ``probe_coverage``, serves one file only). The files go out in
collection order, which :func:`pytest_collection_modifyitems` starts with the longest ones, so
neither worker is handed a five-minute file last. (``loadgroup`` with ``xdist_group`` marks would
be finer, but pytest 9.2's structured node ids drop the group: pytest-xdist issue #1386.)

What the workers share on disk is made safe here too: the release wheel in the checkout's
``.asv/wheels`` is fetched and unpacked once, under a lock (:func:`release_wheel`). Everything else
a test writes goes to its own ``tmp_path`` (per worker) or is written atomically (the exported
program cache).
"""

from __future__ import annotations

import fcntl
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

#: The test files that take longest (seconds of a two-worker run on an idle 2-core machine, 2026-12-07):
#: the scheduler hands the first two out one to each worker, and the others fill in behind them. The
#: gate file runs two asv processes at once (``test_regression_gate.py``, asv over a range, is in the
#: slow set). Only the balance depends on this list.
LONGEST_FIRST = (
    "test_regression_gate_continuous.py",  # 250 s: vkbench gate over base/comment and base/small (sides side
    # by side, small re-measured)
    "test_bugs.py",  # 120 s: every reproducer run in one interpreter
    "test_probes.py",  # 100 s: probe_coverage, every probe partitioned once (pattern-graph cache working)
    "test_policies.py",  # 100 s: four fast entries surveyed, the retry on small modules
    "test_execution.py",  # 80 s: the C++ runner built from the wheel; a policy bundle, three backends
    "test_gate_plants.py",  # 45 s: twelve counts of Blocks(20), the planted suite, in one child
    "test_site.py",  # 45 s
    "test_dashboard.py",  # 45 s
    "test_partition_work.py",  # 35 s: two counting children
)

#: Test files that build an ``aot`` overlay on the release wheel in the checkout's wheelhouse.
RELEASE_WHEEL_USERS = {"test_build_aot.py", "test_regression_gate.py", "test_regression_gate_continuous.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the longest files first (a stable sort: each file keeps its own order)."""
    if getattr(config, "workerinput", None):
        rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def release_wheel() -> Path | None:
    """The installed release's wheel in the checkout's wheelhouse, fetched and unpacked once.

    Both workers build ``aot`` overlays on it (``tests/test_build_aot.py`` in process, the regression
    gate inside asv); one fetches and unpacks it while the other waits on the lock, so neither reads
    a half-written wheel nor replaces the unpacked tree the other is linking from.
    """
    from importlib.metadata import version

    from vkbench.build import wheels
    from vkbench.build.messages import AotError

    house = wheels.default_wheelhouse()
    house.mkdir(parents=True, exist_ok=True)
    with (house / ".tests.lock").open("w") as lock, pytest.MonkeyPatch.context() as patch:
        fcntl.flock(lock, fcntl.LOCK_EX)
        patch.setenv("PIP_NO_CACHE_DIR", "1")  # pip download: no HTTP cache in ~/.cache/pip
        try:
            wheel = wheels.base_wheel(version("executorch").split("+")[0], house)
            wheels.unpacked_base(wheel)
        except AotError:  # offline: the tests that need the wheel fail with their own message
            return None
    return wheel


@pytest.fixture(autouse=True)
def _release_wheel_ready(request: pytest.FixtureRequest) -> None:
    if request.path.name in RELEASE_WHEEL_USERS:
        request.getfixturevalue("release_wheel")


@pytest.fixture(scope="session")
def probe_coverage():
    """Coverage of every seed probe (not the upstream-bug repros) through vkbench's lowering path.

    With ExecuTorch's pattern-graph cache working (the bug row ``partition_reexports_pattern_graphs``'s
    what-if, :func:`vkbench.results.pattern_cache.cache_working`): every ``partition`` call would
    otherwise export the same three rope pattern graphs again (~2.8 s of CPU each); the partitions are
    the same (``tests/test_pattern_cache.py``).
    """
    from vkbench.core.lowering import lower
    from vkbench.results.pattern_cache import cache_working
    from vkbench.workloads.probes import PROBES, build_probe

    logging.getLogger().setLevel(logging.WARNING)
    results = {}
    with cache_working():
        for name in [name for name, probe in PROBES.items() if not probe.upstream_bug]:
            module, inputs = build_probe(name)
            results[name] = lower(module, inputs)[0]
    return results


@pytest.fixture(scope="module")
def pattern_graphs_built_once():
    """The registered pattern graphs built once for a whole test module (``pytestmark =
    pytest.mark.usefixtures("pattern_graphs_built_once")``), as :func:`probe_coverage` does: a module of
    many in-process lowerings skips ~2 s of rope-graph exports per ``partition`` call. Not for modules
    that count exports or partition work in this process (``test_pattern_cache``, the counted work)."""
    from vkbench.results.pattern_cache import cache_working

    with cache_working():
        yield


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
