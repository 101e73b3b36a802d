"""``vkbench build {aot,full,glslc,asv-build,asv-install,conf} ...`` (also ``python -m vkbench.build``).

``python -m`` is the form asv's bare environment calls; users type ``vkbench build``.

``asv-build``/``asv-install`` are asv's ``build_command``/``install_command``
(see ``asv.conf.json``); they dispatch on ``$VKBENCH_BUILD`` (default ``aot``)
and, for ``full``, ``$VKBENCH_EVENT_TRACER`` (``ON``|``OFF``, default ``ON``).
Modes are imported lazily: ``full`` is someone else's module and may pull in
more than the bare asv virtualenv has.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vkbench import settings
from vkbench.build import MODES

USAGE = "usage: vkbench build {aot,full,glslc,asv-build,asv-install,conf} [args...]"


def _mode() -> str:
    mode = settings.text("VKBENCH_BUILD").lower()
    if mode not in MODES:
        raise SystemExit(f"vkbench.build: VKBENCH_BUILD={mode!r}; expected aot or full")
    return mode


def _tracer() -> str:
    value = settings.text("VKBENCH_EVENT_TRACER").upper()
    if value not in ("ON", "OFF"):
        raise SystemExit(f"vkbench.build: VKBENCH_EVENT_TRACER={value!r}; expected ON or OFF")
    return value.lower()


def _asv_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m vkbench.build asv-build|asv-install")
    parser.add_argument("--checkout", type=Path, help="{build_dir}")
    parser.add_argument("--out", type=Path, required=True, help="{build_cache_dir}")
    parser.add_argument("--commit", default=None, help="{commit}")
    parser.add_argument("--conf-dir", default=None, help="{conf_dir}")
    return parser.parse_args(argv)


def asv_build(argv: list[str]) -> int:
    args = _asv_args(argv)
    if _mode() == "aot":
        from vkbench.build import aot

        extra = ["--commit", args.commit] if args.commit else []
        conf = ["--conf-dir", args.conf_dir] if args.conf_dir else []
        return aot.main(["build", str(args.checkout), "--out", str(args.out), *extra, *conf])
    from vkbench.build import full

    return full.main([str(args.checkout), "--out", str(args.out / "venv"), "--tracer", _tracer(),
                      "--json", str(args.out / "build.json")])


def asv_install(argv: list[str]) -> int:
    args = _asv_args(argv)
    from vkbench.build import aot

    conf = ["--conf-dir", args.conf_dir] if args.conf_dir else []
    if _mode() == "aot":
        return aot.main(["install", "--out", str(args.out), *conf])
    # full: the private venv already holds executorch (+ a .pth to the base env); link to it.
    import sysconfig

    venv = args.out / "venv"
    sites = sorted(venv.glob("lib/python*/site-packages"))
    if not sites:
        print(f"vkbench.build: no venv at {venv}; did the full build succeed?", file=sys.stderr)
        return 1
    parsed = aot.parse(["link", *conf])
    try:
        aot.link(parsed, extra_sites=[str(sites[0])])
    except aot.AotError as error:
        print(f"vkbench.build: {error}", file=sys.stderr)
        return 1
    print(f"vkbench.build: asv env {sysconfig.get_paths()['purelib']} -> {sites[0]}", file=sys.stderr)
    return 0


ROOT = Path(__file__).resolve().parents[2]


def derived_config(base: Path | None = None, **overrides: object) -> dict:
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


def conf(argv: list[str]) -> int:
    """Write an asv config for the full mode (both tracer settings), derived from asv.conf.json."""
    parser = argparse.ArgumentParser(prog="python -m vkbench.build conf")
    parser.add_argument("--config", type=Path, default=ROOT / "asv.conf.json")
    parser.add_argument("--out", type=Path, default=ROOT / ".asv" / "full.conf.json")
    parser.add_argument("--tracer", default="ON,OFF", help="comma-separated ON/OFF")
    args = parser.parse_args(argv)
    config = derived_config(args.config)
    config["matrix"] = {"env": {"VKBENCH_BUILD": ["full"],
                                "VKBENCH_EVENT_TRACER": args.tracer.upper().split(",")}}
    config["install_timeout"] = 6 * 3600
    config["env_dir"] = str(ROOT / ".asv" / "env-full")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(config, indent=2) + "\n")
    print(args.out)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "aot":
        from vkbench.build import aot

        return aot.main(rest)
    if command == "full":
        from vkbench.build import full

        return full.main(rest)
    if command == "glslc":
        from vkbench.build import glslc

        return glslc.main(rest)
    if command == "asv-build":
        return asv_build(rest)
    if command == "asv-install":
        return asv_install(rest)
    if command == "conf":
        return conf(rest)
    print(f"vkbench.build: unknown mode {command!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
