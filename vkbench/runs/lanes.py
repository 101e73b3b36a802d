"""asv runs side by side: one asv process per lane of commits, each with its own environments and
results folder, so two processes never share an environment or write one results file.

What ``vkbench gate`` (BASE in one lane, HEAD in the other) and ``vkbench suite equivalence``
(reference commits two by two) use to measure into a scratch folder: nothing recorded is written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

from vkbench import git
from vkbench.paths import ROOT
from vkbench.results.asv_files import read_dir
from vkbench.results.model import ResultSet
from vkbench.runs import asv_machine
from vkbench.runs.upstream_asv import STATE_DIR, clone_dir, prepare


def lane_config(config: Path, lane: int, scratch: Path) -> Path:
    """A copy of asv config ``config`` (beside it: asv resolves its project clone from there) with lane
    ``lane``'s own environment folder and results in ``scratch``."""
    settings = json.loads(Path(config).read_text())
    env_dir = Path(settings.get("env_dir") or ".asv/env")
    env_dir = env_dir if env_dir.is_absolute() else Path(config).parent / env_dir
    settings["env_dir"] = f"{env_dir}-lane-{lane}"
    settings["results_dir"] = str(scratch / f"lane-{lane}" / "results")
    settings["html_dir"] = str(scratch / f"lane-{lane}" / "html")
    path = Path(config).with_name(f".{Path(config).stem}-lane-{lane}.json")
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def ensure_clone(config: Path, env: Mapping[str, str]) -> Path:
    """asv's clone of the project, made (or fetched) once before the lanes start, which then run with
    ``--no-pull``: asv makes it (``git clone --mirror``) on its first run in a config's folder and fetches
    into it on every run, so two lanes starting at once would both clone into one path (one fails, exit
    128) or fetch into one repository at once. ``env`` is the lanes' (the mirror's URL rewrite)."""
    clone = clone_dir(Path(config))
    if not clone.exists():
        url = json.loads(Path(config).read_text())["repo"]
        git.run(["clone", "--mirror", "--quiet", url, str(clone)], env=env)
    else:
        git.run(["fetch", "--quiet", "origin"], git_dir=clone, env=env)
    return clone


def run_lanes(source: Path, config: Path, lanes: Sequence[Sequence[str]], machine: str, scratch: Path,
              pattern: str, env: Mapping[str, str] | None = None
              ) -> tuple[list[ResultSet], list[str], list[int]]:
    """``asv run -b pattern`` of each lane's commits (back to back), the lanes side by side; returns
    each lane's results, the commands and asv's exit codes. ``source``: the mirror or a local repo."""
    asv_env = {**prepare(Path(source), STATE_DIR), **(env or {})}
    ensure_clone(config, asv_env)
    running = []
    commands, codes = [], []
    with ExitStack() as homes:  # each lane's asv rewrites a machine file of its own (asv_machine.own_home)
        for lane, commits in enumerate(lanes):
            (scratch / f"lane-{lane}").mkdir(parents=True, exist_ok=True)
            conf = lane_config(config, lane, scratch)
            asv_machine.ensure(conf, machine, asv_env)
            lane_env = homes.enter_context(asv_machine.own_home(asv_env))
            hashfile = scratch / f"lane-{lane}" / "hashes.txt"
            hashfile.write_text("".join(f"{commit}\n" for commit in commits))
            command = [sys.executable, "-m", "asv", "run", "--config", str(conf), "--machine", machine,
                       "--show-stderr", "--no-pull", "-b", pattern, f"HASHFILE:{hashfile}"]
            print("+ " + " ".join(command), file=sys.stderr, flush=True)
            log = (scratch / f"lane-{lane}.log").open("w")
            running.append((conf, command, log, subprocess.Popen(command, cwd=ROOT, env=lane_env, stdout=log,
                                                                 stderr=subprocess.STDOUT)))
        for conf, command, log, process in running:
            codes.append(process.wait())
            log.close()
            conf.unlink(missing_ok=True)
            commands.append(" ".join(command))
    return [read_dir(scratch / f"lane-{lane}" / "results") for lane in range(len(lanes))], commands, codes
