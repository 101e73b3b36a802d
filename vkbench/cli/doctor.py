"""``vkbench doctor``: what this environment has (versions, runtime backends, Vulkan, settings)."""

from __future__ import annotations

import argparse
import json

from vkbench.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    """Register ``doctor``."""
    doctor = sub.add_parser("doctor", help="versions, runtime backends, Vulkan runtime and device")
    doctor.add_argument("--json", action="store_true")
    doctor.add_argument("--settings", action="store_true", help="only the VKBENCH_* settings table")
    doctor.set_defaults(run=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    return doctor_report(as_json=args.json, settings_only=args.settings)


def doctor_report(*, as_json: bool = False, settings_only: bool = False) -> int:
    """Print :func:`vkbench.execution.diagnosis.diagnose` (or only the settings table, as markdown)."""
    if settings_only:
        from vkbench import settings

        print(settings.markdown())
        return 0
    from vkbench.execution.diagnosis import diagnose

    report = diagnose()
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    for key, value in report["versions"].items():
        print(f"{key:22s} {value}")
    backends = report["registered_backends"]
    print(f"{'runtime backends':22s} {', '.join(backends) if isinstance(backends, list) else backends}")
    print(f"{'Vulkan runtime':22s} {'yes' if report['vulkan_runtime'] else 'no'}")
    devices = report["vulkan_devices"]
    shown = ", ".join(devices) if isinstance(devices, list) else devices
    print(f"{'Vulkan devices':22s} {shown or 'none'}")
    print(f"{'runtime benchmarks':22s} {report['runtime_benchmarks']}")
    print("settings (docs/settings.md):")
    for name, setting in report["settings"].items():
        print(f"  {name:22s} {setting['value']}  ({setting['source']})")
    return 0
