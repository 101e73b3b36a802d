"""The PR gate workflow and the daily workflow's confirmation step, checked offline.

Both workflow files are validated against SchemaStore's GitHub workflow schema, the copy the
``check-jsonschema`` package vendors (no network), with ``jsonschema``'s Draft 7 validator; the YAML is
read as GitHub reads it (YAML 1.2: ``on:`` is a key, not ``True``). The gate workflow's own shell steps
then run here, on a small git repository and a stand-in ``vkbench``: the mirror step resolves a branch,
a pull request ref and a commit of no branch; the gate step passes its inputs through untouched and
turns the exit status into the job's outputs; the summary step writes the report or says why none.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from git_repos import git
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
GATE = WORKFLOWS / "pr-gate.yml"
DAILY = WORKFLOWS / "asv.yml"
UPSTREAM = "https://github.com/pytorch/executorch.git"
INPUTS = ("base", "head", "repository")
GATE_COMMAND = [".venv/bin/vkbench", "gate", "$BASE", "$HEAD", "--mirror", "executorch.git",
                "--report", "gate-report.md"]


def load(path: Path) -> dict:
    """A workflow as GitHub reads it: YAML 1.2, so ``on`` stays the key ``"on"``."""
    return YAML(typ="safe", pure=True).load(path.read_text())


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema_file = files("check_jsonschema.builtin_schemas.vendor") / "github-workflows.json"
    schema = json.loads(schema_file.read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.fixture(scope="module")
def gate() -> dict:
    return load(GATE)


@pytest.fixture(scope="module")
def daily() -> dict:
    return load(DAILY)


def _messages(errors: Iterator[jsonschema.ValidationError]) -> list[str]:
    """Every message of ``errors`` and of the alternatives under them (``oneOf`` keeps them in context)."""
    out = []
    for error in errors:
        out.append(error.message)
        out += _messages(iter(error.context or []))
    return out


def _step(workflow: dict, job: str, name: str) -> dict:
    return next(s for s in workflow["jobs"][job]["steps"] if s.get("name") == name)


def _plain(script: str) -> str:
    """A step's script with ``${{ ... }}`` expressions replaced by ``X``, as tests/test_workflow.py does."""
    return re.sub(r"\$\{\{[^}]*\}\}", "X", script)


def _commands(script: str) -> list[list[str]]:
    """The command lines of a step's script: continued lines joined, comments dropped."""
    lines = (line.strip() for line in script.replace("\\\n", " ").splitlines())
    return [shlex.split(line, comments=True) for line in lines if line and not line.startswith("#")]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A step's environment here: no user or system git config, HOME in tmp."""
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8", **extra}


def _run_step(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A step's script the way the runner's default shell runs it (``bash -e``)."""
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


# --- the schema -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [GATE, DAILY], ids=["pr-gate.yml", "asv.yml"])
def test_workflow_matches_the_github_workflow_schema(path: Path,
                                                     validator: jsonschema.Draft7Validator) -> None:
    workflow = load(path)
    assert "on" in workflow and True not in workflow  # read as GitHub reads it
    assert _messages(validator.iter_errors(workflow)) == []


def _without_runs_on(w: dict) -> None:
    del w["jobs"]["gate"]["runs-on"]


def _misspelled_trigger(w: dict) -> None:
    w["on"]["workflow_calls"] = w["on"].pop("workflow_call")


def _input_of_no_type(w: dict) -> None:
    w["on"]["workflow_call"]["inputs"]["base"]["type"] = "str"


def _output_without_value(w: dict) -> None:
    del w["on"]["workflow_call"]["outputs"]["verdict"]["value"]


def _step_with_uses_and_run(w: dict) -> None:
    w["jobs"]["gate"]["steps"][0]["run"] = "echo"


@pytest.mark.parametrize("breakage", [_without_runs_on, _misspelled_trigger, _input_of_no_type,
                                      _output_without_value, _step_with_uses_and_run])
def test_the_validator_rejects_a_broken_copy(breakage: Callable[[dict], None], gate: dict,
                                             validator: jsonschema.Draft7Validator) -> None:
    broken = copy.deepcopy(gate)
    breakage(broken)
    assert broken != gate and validator.is_valid(gate)
    messages = _messages(validator.iter_errors(broken))
    assert messages
    if breakage is _without_runs_on:
        assert "'runs-on' is a required property" in messages


def test_the_validator_rejects_a_file_without_runs_on(tmp_path: Path,
                                                      validator: jsonschema.Draft7Validator) -> None:
    text = GATE.read_text()
    broken = tmp_path / "pr-gate.yml"
    broken.write_text(re.sub(r"^    runs-on: .*\n", "", text, count=1, flags=re.M))
    assert len(broken.read_text().splitlines()) == len(text.splitlines()) - 1
    assert validator.is_valid(load(GATE)) and not validator.is_valid(load(broken))
    assert "'runs-on' is a required property" in _messages(validator.iter_errors(load(broken)))


# --- the gate workflow's structure ----------------------------------------------------------------


def test_both_triggers_take_base_head_and_repository(gate: dict) -> None:
    triggers = gate["on"]
    assert set(triggers) == {"workflow_dispatch", "workflow_call"}
    for trigger in triggers.values():
        inputs = trigger["inputs"]
        assert set(INPUTS) <= set(inputs)
        assert inputs["base"]["required"] is True and inputs["head"]["required"] is True
        assert inputs["repository"]["required"] is False and inputs["repository"]["default"] == UPSTREAM
        assert all(spec["type"] == "string" for spec in inputs.values())
    outputs = triggers["workflow_call"]["outputs"]
    job_outputs = gate["jobs"]["gate"]["outputs"]
    for name in ("verdict", "exit-code"):
        assert outputs[name]["value"] == f"${{{{ jobs.gate.outputs.{name} }}}}"
        assert job_outputs[name] == f"${{{{ steps.gate.outputs.{name} }}}}"


def test_one_job_on_a_hosted_runner_within_an_hour(gate: dict) -> None:
    (job,) = gate["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and 0 < job["timeout-minutes"] <= 60
    steps = job["steps"]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses == ["actions/checkout", "actions/setup-python", "actions/cache", "actions/upload-artifact"]
    runs = [s for s in steps if "run" in s]
    needles = ("bash scripts/setup", "git clone", ".venv/bin/vkbench gate", "GITHUB_STEP_SUMMARY", "exit 1")
    order = [next(i for i, s in enumerate(runs) if needle in s["run"]) for needle in needles]
    assert order == sorted(order) and len(set(order)) == 5
    assert _step(gate, "gate", "Upload the report")["with"] == {
        "name": "gate-report", "path": "gate-report.md", "if-no-files-found": "warn"}


def test_the_gate_step_runs_the_gate_command(gate: dict) -> None:
    step = _step(gate, "gate", "vkbench gate")
    assert step["id"] == "gate"
    (line,) = [c for c in _commands(step["run"]) if c[:2] == [".venv/bin/vkbench", "gate"]]
    assert line[:len(GATE_COMMAND)] == GATE_COMMAND and line[len(GATE_COMMAND):] == ["||", "rc=$?"]
    clone = next(c for c in _commands(_step(gate, "gate", "Bare mirror of the repository, with base and head")
                                      ["run"]) if c[:2] == ["git", "clone"])
    assert clone[-2:] == ["$REPOSITORY", "executorch.git"] and "--bare" in clone
    assert not any(flag.startswith("--filter") or flag == "--depth" for flag in clone)  # aot needs blobs


def test_every_gate_step_is_valid_bash(gate: dict) -> None:
    scripts = [s["run"] for s in gate["jobs"]["gate"]["steps"] if "run" in s]
    assert len(scripts) == 5
    for script in scripts:
        done = subprocess.run(["bash", "-n"], input=_plain(script), capture_output=True, text=True)
        assert done.returncode == 0, (script, done.stderr)


def test_inputs_reach_the_shell_only_through_env(gate: dict) -> None:
    """No expression in any ``run:`` (an input there would be pasted into the script); the inputs are
    the job's environment, and the scripts read that."""
    job = gate["jobs"]["gate"]
    for step in job["steps"]:
        assert "${{" not in step.get("run", ""), step
    assert job["env"]["BASE"] == "${{ inputs.base }}" and job["env"]["HEAD"] == "${{ inputs.head }}"
    assert job["env"]["REPOSITORY"] == f"${{{{ inputs.repository || '{UPSTREAM}' }}}}"
    code = "\n".join(line for line in GATE.read_text().splitlines() if not line.lstrip().startswith("#"))
    quoted = {m.group(0) for m in re.finditer(r"\$\{\{[^}]*inputs\.[^}]*\}\}", code)}
    assert quoted == {"${{ inputs.base }}", "${{ inputs.head }}", job["env"]["REPOSITORY"],
                      "${{ inputs.vkbench-repository || github.repository }}", "${{ inputs.vkbench-ref }}"}
    assert "inputs.vkbench" in str(job["steps"][0]["with"])  # the checkout's, not a shell's


def test_the_report_is_kept_whatever_the_verdict(gate: dict) -> None:
    summary = _step(gate, "gate", "Report in the job summary")
    upload = _step(gate, "gate", "Upload the report")
    fail = _step(gate, "gate", "Fail unless the gate passed")
    assert summary["if"] == "always()" and upload["if"] == "always()"
    assert fail["if"] == "always() && steps.gate.outputs.exit-code != '0'"
    assert "continue-on-error" not in fail and _run_step(fail["run"], ROOT, _env(ROOT)).returncode == 1
    steps = gate["jobs"]["gate"]["steps"]
    assert steps.index(summary) < steps.index(upload) < steps.index(fail) == len(steps) - 1


# --- the gate workflow's steps, run here ---------------------------------------------------------


@pytest.fixture
def upstream(tmp_path: Path) -> dict[str, str]:
    """A repository like GitHub's: ``main``, a pull request ref past it, and a commit of no branch."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {}
    for name in ("first", "base", "head", "loose"):
        (repo / "f.txt").write_text(name)
        git(repo, "add", "f.txt")
        git(repo, "commit", "-qm", name)
        shas[name] = git(repo, "rev-parse", "HEAD")
        if name == "base":
            git(repo, "checkout", "-q", "-b", "work")
    git(repo, "update-ref", "refs/pull/7/head", shas["head"])
    git(repo, "update-ref", "refs/pull/8/head", shas["loose"])
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-D", "work")
    return {"path": str(repo), **shas}


@pytest.mark.parametrize(("head", "ref", "commit"), [("refs/pull/7/head", "refs/pull/7/head", "head"),
                                                     ("pull/7/head", "refs/pull/7/head", "head"),
                                                     ("<loose>", "refs/gate/<loose>", "loose"),
                                                     ("main~1", "refs/gate/<first>", "first")])
def test_the_mirror_step_reaches_base_and_head(gate: dict, upstream: dict[str, str], tmp_path: Path,
                                               head: str, ref: str, commit: str) -> None:
    """Over a transport (``file://``), as from GitHub: the clone has branches and tags only, so a pull
    request ref, or a commit only one reaches, is fetched; a commit of no branch or tag gets a ref."""
    script = _step(gate, "gate", "Bare mirror of the repository, with base and head")["run"]
    head = head.replace("<loose>", upstream["loose"])
    ref = ref.replace("<loose>", upstream["loose"]).replace("<first>", upstream["first"])
    work = tmp_path / "runner"
    work.mkdir()
    env = _env(tmp_path, REPOSITORY=f"file://{upstream['path']}", BASE="main", HEAD=head)
    done = _run_step(script, work, env)
    assert done.returncode == 0, done.stderr
    mirror = work / "executorch.git"
    refs = git(mirror, "for-each-ref", "--format=%(refname)").split()
    assert git(mirror, "rev-parse", "--is-bare-repository") == "true"
    assert git(mirror, "rev-parse", "main") == upstream["base"] and ref in refs
    assert git(mirror, "rev-parse", f"{head}^{{commit}}") == git(mirror, "rev-parse", ref)
    assert git(mirror, "rev-parse", ref) == upstream[commit]
    assert "refs/pull/8/head" not in refs  # no other pull request
    assert not [r for r in refs if r.startswith("refs/gate/")] or ref.startswith("refs/gate/")


def test_the_mirror_step_leaves_a_bad_ref_to_the_gate(gate: dict, upstream: dict[str, str],
                                                      tmp_path: Path) -> None:
    script = _step(gate, "gate", "Bare mirror of the repository, with base and head")["run"]
    done = _run_step(script, tmp_path, _env(tmp_path, REPOSITORY=upstream["path"], BASE="main",
                                            HEAD="no-such-branch"))
    assert done.returncode == 0, done.stderr
    assert "::warning::" in done.stdout and "no-such-branch" not in done.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    no_repository = _run_step(script, elsewhere, _env(tmp_path, REPOSITORY=str(tmp_path / "none"),
                                                      BASE="main", HEAD="main"))
    assert no_repository.returncode != 0 and not (elsewhere / "executorch.git").exists()


STAND_IN = """#!/usr/bin/env bash
printf '%s\\n' "$@" > "$ARGS_FILE"
echo "# report of $# arguments" > gate-report.md
exit "$GATE_EXIT_STATUS"
"""


@pytest.mark.parametrize(("status", "verdict"), [(0, "pass"), (1, "regression"), (2, "bad-input"),
                                                 (3, "error")])
def test_the_gate_step_records_the_verdict_and_passes_inputs_untouched(
        gate: dict, tmp_path: Path, status: int, verdict: str) -> None:
    """The step itself succeeds; the job's last step fails it from ``exit-code``. A hostile-looking
    input stays one literal argument (it never becomes script)."""
    script = _step(gate, "gate", "vkbench gate")["run"]
    work = tmp_path / "runner"
    (work / ".venv" / "bin").mkdir(parents=True)
    stand_in = work / ".venv" / "bin" / "vkbench"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    outputs, args = tmp_path / "github_output", tmp_path / "args"
    hostile = 'main"; touch pwned; echo "$(touch pwned2)'
    env = _env(tmp_path, BASE=hostile, HEAD="refs/pull/7/head", GITHUB_OUTPUT=str(outputs),
               ARGS_FILE=str(args), GATE_EXIT_STATUS=str(status))
    done = _run_step(script, work, env)
    assert done.returncode == 0, done.stderr
    assert outputs.read_text().splitlines() == [f"exit-code={status}", f"verdict={verdict}"]
    assert args.read_text().splitlines() == [
        "gate", hostile, "refs/pull/7/head", "--mirror", "executorch.git", "--report", "gate-report.md"]
    assert not (work / "pwned").exists() and not (work / "pwned2").exists()
    assert (work / "gate-report.md").read_text() == "# report of 7 arguments\n"


def test_the_summary_step_appends_the_report_or_says_why_none(gate: dict, tmp_path: Path) -> None:
    script = _step(gate, "gate", "Report in the job summary")["run"]
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n")
    (tmp_path / "gate-report.md").write_text("## vkbench gate\n\n| benchmark | verdict |\n")
    done = _run_step(script, tmp_path, _env(tmp_path, GITHUB_STEP_SUMMARY=str(summary), GATE_EXIT="1"))
    assert done.returncode == 0, done.stderr
    assert summary.read_text() == "earlier\n## vkbench gate\n\n| benchmark | verdict |\n"
    (tmp_path / "gate-report.md").unlink()
    for gate_exit, said in (("3", "exit status: 3"), ("", "exit status: it did not run")):
        summary.write_text("")
        env = _env(tmp_path, GITHUB_STEP_SUMMARY=str(summary), GATE_EXIT=gate_exit)
        done = _run_step(script, tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert summary.read_text().startswith("vkbench gate wrote no report") and said in summary.read_text()


# --- the daily workflow's confirmation step -------------------------------------------------------


def test_the_daily_run_confirms_what_it_recorded_before_publishing(daily: dict) -> None:
    from vkbench.cli import build_parser

    job = daily["jobs"]["publish"]
    names = [s.get("name", s.get("uses", "")) for s in job["steps"]]
    confirm_step = _step(daily, "publish", "Confirm the new count steps (both sides measured again)")
    at = job["steps"].index(confirm_step)
    assert names.index("Merge shard results into results/") < at
    publish = names.index("Publish (asv sites + offline assets + dashboard)")
    assert at < publish < names.index("Commit results")
    assert confirm_step["continue-on-error"] is True  # the site goes out with what was confirmed
    assert confirm_step["timeout-minutes"] < job["timeout-minutes"] <= 360
    commands = _commands(confirm_step["run"])
    clone = commands[0]
    assert clone[:2] == ["git", "clone"] and clone[-2:] == [UPSTREAM, "executorch.git"] and "--bare" in clone
    assert not any(flag.startswith("--filter") for flag in clone)  # the aot build checks commits out
    confirms = [build_parser().parse_args(c[1:]) for c in commands[1:]]
    assert [c[0] for c in commands[1:]] == [".venv/bin/vkbench"] * 2
    assert [a.dry_run for a in confirms] == [True, False]
    for args in confirms:
        assert args.run.__name__ == "_confirm" and args.mirror == Path(clone[-1])
        assert args.results == Path("results/upstream") and args.limit is None and args.runners is None
        assert args.counts_only  # count steps: exact, minutes a pair; timings need interleaved rounds
    installs = [i for i, s in enumerate(job["steps"]) if "pip install" in s.get("run", "")]
    assert installs and installs[0] < at  # .venv exists when it runs


def test_the_confirm_dry_run_reads_the_recorded_results(daily: dict, tmp_path: Path) -> None:
    """The step's dry run, here, on a copy of the committed results: it lists and measures nothing."""
    results = tmp_path / "upstream"
    shutil.copytree(ROOT / "results" / "upstream", results)
    before = (results / "confirmations.json").read_bytes()
    done = subprocess.run([sys.executable, "-m", "vkbench", "history", "confirm", "--mirror",
                           str(tmp_path / "executorch.git"), "--results", str(results), "--dry-run"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = re.search(r"^(\d+) steps to confirm in (\d+) asv runs \((\d+) confirmations stored\)$",
                      done.stderr, re.M)
    assert found, done.stderr
    stored = len(json.loads(before)["confirmations"])
    assert int(found.group(3)) == stored > 0
    assert (results / "confirmations.json").read_bytes() == before  # nothing measured, nothing stored
    assert not (tmp_path / "executorch.git").exists()
