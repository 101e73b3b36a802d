"""asv's ``build_command``/``install_command`` and the asv configs derived from ``asv.conf.json``.

``asv.conf.json`` runs ``python -m vkbench build asv-build ...`` and
``... asv-install ...`` in asv's bare virtualenv; both dispatch on
``$VKBENCH_BUILD`` (default ``aot``) and, for ``full``,
``$VKBENCH_EVENT_TRACER`` (``ON``|``OFF``, default ``ON``). The modes are
imported lazily: ``full`` may pull in more than the bare virtualenv has.
"""

from __future__ import annotations

import json
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vkbench import settings
from vkbench.build import MODES
from vkbench.paths import ROOT


def mode() -> str:
    """``$VKBENCH_BUILD``, checked: a typo must stop the build, not fall back to ``aot``."""
    value = settings.text("VKBENCH_BUILD").lower()
    if value not in MODES:
        raise SystemExit(f"vkbench.build: VKBENCH_BUILD={value!r}; expected aot or full")
    return value


def tracer() -> str:
    """``$VKBENCH_EVENT_TRACER`` as ``full``'s ``--tracer`` value (``on``|``off``)."""
    value = settings.text("VKBENCH_EVENT_TRACER").upper()
    if value not in ("ON", "OFF"):
        raise SystemExit(f"vkbench.build: VKBENCH_EVENT_TRACER={value!r}; expected ON or OFF")
    return value.lower()


def asv_build(checkout: Path, out: Path, commit: str | None = None, conf_dir: str | None = None) -> int:
    """asv's ``build_command``: build ``checkout`` into ``out`` ({build_cache_dir}) in the chosen mode.

    Returns the exit status asv sees: 0, or 1 after one ``FAILED`` line.
    """
    if mode() == "aot":
        from vkbench.build import aot

        try:
            aot.build(checkout, out, commit=commit, conf_dir=conf_dir)
        except aot.AotError as error:
            aot.log(f"FAILED: {error}")
            return 1
        return 0
    from vkbench.build import full

    return full.build(full.FullBuild(checkout=checkout, out=out / "venv", tracer=tracer(),
                                     record=out / "build.json"))


def asv_install(out: Path, conf_dir: str | None = None) -> int:
    """asv's ``install_command``: put what :func:`asv_build` made into asv's env (0, or 1).

    ``aot`` installs the wheel and links the base env; ``full``'s private
    venv already holds executorch (and a .pth to the base env), so the asv
    env is only linked to it.
    """
    from vkbench.build import aot

    if mode() == "aot":
        try:
            aot.install(out, conf_dir=conf_dir)
        except aot.AotError as error:
            aot.log(f"FAILED: {error}")
            return 1
        return 0
    venv = out / "venv"
    sites = sorted(venv.glob("lib/python*/site-packages"))
    if not sites:
        print(f"vkbench.build: no venv at {venv}; did the full build succeed?", file=sys.stderr)
        return 1
    try:
        aot.link(conf_dir=conf_dir, extra_sites=[str(sites[0])])
    except aot.AotError as error:
        print(f"vkbench.build: {error}", file=sys.stderr)
        return 1
    print(f"vkbench.build: asv env {sysconfig.get_paths()['purelib']} -> {sites[0]}", file=sys.stderr)
    return 0


def derived_config(base: Path | None = None, **overrides: object) -> dict[str, Any]:
    """asv.conf.json with ``overrides``, for a config file stored anywhere.

    asv chdirs to the config file's directory, so ``{conf_dir}`` in the build
    and install commands would stop pointing at this repository; it is
    replaced by the repository's absolute path here.
    """
    from asv.util import load_json

    config = load_json(str(base or ROOT / "asv.conf.json"), js_comments=True)
    for key in ("build_command", "install_command", "uninstall_command"):
        if isinstance(config.get(key), list):
            config[key] = [c.replace("{conf_dir}", str(ROOT)) for c in config[key]]
    for key in ("benchmark_dir", "env_dir", "results_dir", "html_dir"):
        if key in config and not Path(config[key]).is_absolute():
            config[key] = str(ROOT / config[key])
    config.update(overrides)
    return config


#: Keys of asv.conf.json that build an environment: a config run against an existing venv
#: (``-E existing:``) or an installed release drops them.
BUILD_KEYS = ("build_command", "install_command", "uninstall_command", "matrix", "exclude", "include")


def existing_env_config(path: Path, **overrides: object) -> Path:
    """Write asv.conf.json with ``overrides`` and without :data:`BUILD_KEYS` to ``path``: the config
    of runs whose environment is built already (the release ledger, a runtime record)."""
    config = {k: v for k, v in derived_config(**overrides).items() if k not in BUILD_KEYS}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def write_full_conf(out: Path = ROOT / ".asv" / "full.conf.json", config: Path = ROOT / "asv.conf.json",
                    tracers: Sequence[str] = ("ON", "OFF")) -> Path:
    """Write an asv config for the ``full`` mode (one env per tracer setting); return its path."""
    derived = derived_config(config)
    derived["matrix"] = {"env": {"VKBENCH_BUILD": ["full"],
                                 "VKBENCH_EVENT_TRACER": [t.upper() for t in tracers]}}
    derived["install_timeout"] = 6 * 3600
    derived["env_dir"] = str(ROOT / ".asv" / "env-full")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(derived, indent=2) + "\n")
    return out
