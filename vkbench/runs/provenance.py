"""The provenance of a recording run: the settings the suite was run under, written beside its results.

Every way of recording (``vkbench record`` over the installed release, ``vkbench upstream -- run``
over a mirror, ``history confirm``, ``vkbench runtime record``) stamps its result files through
:func:`vkbench.results.recording.recording` with this.
"""

from __future__ import annotations

from collections.abc import Sequence

from vkbench import git
from vkbench.paths import ROOT
from vkbench.results.model import Provenance
from vkbench.results.recording import provenance


def _option(asv_args: Sequence[str], short: str | None, long: str) -> str | None:
    """The value of an option of an asv command line (its first occurrence), if given."""
    for i, arg in enumerate(asv_args):
        if arg in (short, long) and i + 1 < len(asv_args):
            return asv_args[i + 1]
        if arg.startswith(f"{long}="):
            return arg.split("=", 1)[1]
    return None


def bench_pattern(asv_args: Sequence[str]) -> str | None:
    """The ``-b``/``--bench`` pattern of an asv command line (the first one), if any."""
    return _option(asv_args, "-b", "--bench")


def run_provenance(asv_args: Sequence[str], tier: str | None) -> Provenance:
    """Tier, ``-b`` pattern, asv's launch method (the command line's, else the config's), the vkbench
    commit and torch of a run starting now."""
    import torch

    from vkbench.build.hooks import derived_config

    head = git.text(["rev-parse", "HEAD"], cwd=ROOT, check=False)
    launch = _option(asv_args, None, "--launch-method")
    if launch is None:
        launch = str(derived_config().get("launch_method") or "spawn")
    return provenance(tier, bench_pattern(asv_args), launch, vkbench_commit=head or None,
                      torch=torch.__version__)
