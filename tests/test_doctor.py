"""``vkbench doctor`` tells what this ExecuTorch can measure."""

from __future__ import annotations

import json
import subprocess
import sys

from vkbench.execution.diagnosis import diagnose


def test_doctor_json_reports_versions_and_vulkan_state():
    done = subprocess.run(
        [sys.executable, "-m", "vkbench", "doctor", "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["versions"]["executorch"] and report["versions"]["torch"]
    assert isinstance(report["vulkan_runtime"], bool)
    assert isinstance(report["registered_backends"], list)
    assert report["vulkan_runtime"] == ("VulkanBackend" in report["registered_backends"])
    if not report["vulkan_runtime"]:
        assert report["runtime_benchmarks"].startswith("skipped")


def test_pypi_wheel_has_no_vulkan_runtime():
    report = diagnose()
    backends = report["registered_backends"]
    assert isinstance(backends, list) and backends, backends
    assert report["vulkan_runtime"] == ("VulkanBackend" in backends)
