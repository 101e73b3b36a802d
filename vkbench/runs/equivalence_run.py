"""``vkbench suite equivalence``: re-measure reference commits under the changed suite, store the evidence.

After an edit of vkbench code that benchmark modules read (their asv ``version`` digests changed),
each reference commit's count tracks are measured again with asv through the ``vkbench upstream``
machinery (mirror, aot build) into a scratch results directory, a lane of commits per asv process,
the lanes side by side (:mod:`vkbench.runs.lanes`). The values are compared with the recorded ones, class by
class (:func:`judge`, pure); a class whose every re-measured value equals the recorded one is kept
under its recorded version, any other is restarted (:mod:`vkbench.suite.equivalence`). Nothing
recorded is written: only ``results/history/suite-equivalence.json`` gains records.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vkbench.results.asv_files import read_dir
from vkbench.results.confirmations import asv_name
from vkbench.results.model import ResultFile, ResultSet
from vkbench.runs.lanes import run_lanes
from vkbench.runs.upstream_asv import DEFAULT_CONFIG, write_config
from vkbench.suite import equivalence, identity
from vkbench.suite.equivalence import Equivalence
from vkbench.suite.identity import carries_digest

#: What is re-measured: every count track of the lowering modules that a gate or standard record
#: makes in minutes (no time, memory or record-cost track: those may restart), plus one VLA entry.
COUNTS = (
    r"^bench_probes\.Probe(Coverage|Failure)\."
    r"|^bench_partition\.(PartitionScalingRecord|PartitionWithoutHorizontalFusionRecord)\.track_partitions\("
    r"(50|100|200)\)"
    r"|^bench_partition\.PartitionWork\.track_partition_events\(50,"
    r"|^bench_policies\.PolicyPartition\."
    r"|^bench_policies\.VLAPolicyLowering\.track_\w+\('smolvla/denoise_step'\)"
)
#: Units of tracks that are not counts (not compared; their classes keep or restart with their counts).
NOT_COUNTS = {"seconds", "MiB", "KiB", "kB"}


def measure(mirror: Path, lanes: Sequence[Sequence[str]], machine: str, scratch: Path,
            pattern: str = COUNTS) -> tuple[list[ResultSet], list[str]]:
    """Each lane's commits by one asv process, the lanes side by side (:mod:`vkbench.runs.lanes`);
    every lane's results, and the commands with asv's exit status."""
    found, commands, codes = run_lanes(mirror, write_config(DEFAULT_CONFIG), lanes, machine, scratch, pattern)
    return found, [f"{command}  # exit {code}" for command, code in zip(commands, codes, strict=True)]


def _same(a: Any, b: Any) -> bool:
    def norm(x: Any) -> Any:
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else x
    return norm(a) == norm(b)


def _recorded(recorded: ResultSet, commit: str, machine: str, name: str) -> ResultFile | None:
    """The newest record of ``name`` at ``commit`` on ``machine`` made by a digest-bearing suite (a
    commit can have older files too: another environment, an older suite)."""
    held = [f for f in recorded.files if f.commit.startswith(commit) and f.machine == machine
            and name in f.results and carries_digest(f.version(name))]
    return max(held, key=lambda f: f.date) if held else None


def judge(recorded: ResultSet, measured: Sequence[ResultSet], machine: str, commits: Sequence[str],
          measured_with: str, date: str, pattern: str = COUNTS) -> list[Equivalence]:
    """One record per benchmark module measured (pure): old = the recorded version, new = the
    re-measured one; a class is kept when every count it has at every reference commit is equal.
    Only the points ``pattern`` selected are compared (the others were not measured again); a point
    the recorded grid lacks (a probe added to the catalogue) is listed as added, not compared, and
    a class none of whose points could be compared is restarted."""
    units = {name: str(meta.get("unit")) for lane in measured for name, meta in lane.benchmarks.items()
             if isinstance(meta, dict)}
    files = [f for lane in measured for f in lane.files]
    values: dict[str, dict[str, dict[str, list[list[Any]]]]] = {}
    added: dict[str, dict[str, set[str]]] = {}
    versions: dict[str, tuple[set[str], set[str]]] = {}
    for commit in commits:
        after = next((f for f in files if f.commit.startswith(commit) and f.machine == machine),
                     None)
        if after is None:
            continue
        for name, held in after.results.items():
            before = _recorded(recorded, commit, machine, name)
            if units.get(name) in NOT_COUNTS or before is None:
                continue
            module = name.split(".")[0]
            old, new = versions.setdefault(module, (set(), set()))
            old.add(str(before.version(name)))
            new.add(str(held.version))
            was = before.values(name)
            now = {params: value for params, value in after.values(name).items()
                   if re.search(pattern, name) or re.search(pattern, asv_name(name, ", ".join(params)))}
            # A point the recorded grid does not have (a new probe) starts its series: not compared.
            for params in now.keys() - was.keys():
                added.setdefault(module, {}).setdefault(name, set()).add(asv_name(name, ", ".join(params)))
            pairs = [[was[params], value] for params, value in now.items() if params in was]
            values.setdefault(module, {}).setdefault(name, {})[commit] = [
                [p[0] for p in pairs], [p[1] for p in pairs]]
    records = []
    for module, benchmarks in sorted(values.items()):
        old, measured_under = versions[module]
        new = measured_under - old  # a class a stored record keeps was measured under the old digest
        if len(old) != 1 or len(new) != 1:
            raise ValueError(f"{module}: reference commits recorded under {len(old)} versions and "
                             f"re-measured under {len(new)} new ones; equivalence needs one suite a side")
        classes = sorted({name.split(".")[1] for name in benchmarks})
        changed = {name.split(".")[1] for name, by_commit in benchmarks.items()
                   for was, now in by_commit.values() if not all(map(_same, was, now))}
        changed |= {name.split(".")[1] for name, by_commit in benchmarks.items()
                    if not any(was for was, _ in by_commit.values())}  # nothing of it compared
        new_points = {name: sorted(points) for name, points in sorted(added.get(module, {}).items())}
        records.append(Equivalence(module, old.pop(), new.pop(), [c for c in classes if c not in changed],
                                   sorted(changed), list(commits), benchmarks, measured_with, date,
                                   new_points))
    return records


def run(mirror: Path, recorded_root: Path, lanes: Sequence[Sequence[str]], machine: str,
        pattern: str = COUNTS, keep: Path | None = None, measured: Path | None = None
        ) -> tuple[list[Equivalence], list[str]]:
    """Measure (or read what an earlier run kept in ``measured``), judge and store: the new records
    are appended to :data:`equivalence.PATH` (a record for the same module and digests replaces the
    older one). Returns them and the asv commands."""
    with tempfile.TemporaryDirectory(prefix="vkbench-equivalence-") as tmp:
        scratch = Path(keep) if keep else Path(tmp)
        if measured is not None:  # judged from the lanes a run kept (its logs end with asv's summary)
            found = [read_dir(measured / f"lane-{lane}" / "results") for lane in range(len(lanes))]
            commands = [f"asv run -b {pattern} HASHFILE:{measured}/lane-{lane}/hashes.txt (kept in "
                        f"{measured})" for lane in range(len(lanes))]
        else:
            found, commands = measure(mirror, lanes, machine, scratch, pattern)
        date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%MZ")
        how = "; ".join(commands) + f"; {identity.stored().measured_with if identity.stored() else ''}"
        commits = [c for lane in lanes for c in lane]
        records = judge(read_dir(recorded_root), found, machine, commits, how, date, pattern)
    stored = [r for r in equivalence.read() if not any((r.module, r.old, r.new) == (n.module, n.old, n.new)
                                                       for n in records)]
    equivalence.write(stored + records)
    return records, commands
