"""``aot`` build mode: overlay rules, versioning, failure lines, asv dispatch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import zipfile
from pathlib import Path

import pytest

from vkbench.build import __main__ as build_main
from vkbench.build import aot

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("executorch.exir")


@pytest.mark.parametrize(("version", "base"), [
    ("1.6.0a0", "1.5.1"),   # main after the 1.5 branch cut: no 1.6 release yet
    ("1.5.0a0", "1.5.1"),   # development towards 1.5: newest 1.5.x
    ("1.5.1", "1.5.1"),
    ("1.4.0", "1.4.0"),     # a release tag: itself
    ("1.3.0", "1.3.0"),
    (None, aot.KNOWN_RELEASES[-1]),
])
def test_nearest_release(version: str | None, base: str) -> None:
    assert aot.nearest_release(version) == base


def test_package_dirs_src_layout_and_legacy(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"executorch" = "src/executorch"\n')
    assert aot.package_dirs(tmp_path) == {"executorch": tmp_path / "src/executorch"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"executorch.exir" = "exir"\n"executorch.backends" = "backends"\n'
        '"other" = "x"\n')
    assert aot.package_dirs(tmp_path) == {"executorch.backends": tmp_path / "backends",
                                          "executorch.exir": tmp_path / "exir"}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return aot.source_tree_from_installed(tmp_path_factory.mktemp("et") / "executorch")


def _build(checkout: Path, out: Path, *extra: str) -> int:
    return aot.main(["build", str(checkout), "--out", str(out), "--commit", "c0ffee" * 6 + "abcd", *extra])


def test_source_tree_looks_like_upstream(checkout: Path) -> None:
    assert (checkout / "src/executorch/exir").is_symlink()
    assert (checkout / "backends/vulkan/partitioner/vulkan_partitioner.py").is_file()
    assert (checkout / "version.txt").read_text().strip() == aot.KNOWN_RELEASES[-1]


def test_overlay_replaces_adds_and_drops(checkout: Path, tmp_path: Path) -> None:
    partitioner = checkout / "backends/vulkan/partitioner/vulkan_partitioner.py"
    original = partitioner.read_text()
    dropped = checkout / "backends/vulkan/utils.py.bak"  # not a source suffix: ignored
    dropped.write_text("x")
    removed = checkout / "backends/vulkan/test/test_vulkan_delegate_header.py"
    removed_text = removed.read_text() if removed.exists() else None
    try:
        partitioner.write_text(original + "\nVKBENCH_MARK = 1\n")
        (checkout / "backends/vulkan/vkbench_added.py").write_text("ADDED = True\n")
        if removed_text is not None:
            removed.unlink()
        assert _build(checkout, tmp_path, "--smoke", "") == 0
    finally:
        partitioner.write_text(original)
        (checkout / "backends/vulkan/vkbench_added.py").unlink()
        dropped.unlink()
        if removed_text is not None:
            removed.write_text(removed_text)
    wheels = list(tmp_path.glob("*.whl"))
    assert len(wheels) == 1
    assert wheels[0].name.startswith(f"executorch-{aot.KNOWN_RELEASES[-1]}+aot.")
    with zipfile.ZipFile(wheels[0]) as archive:
        names = set(archive.namelist())
        text = archive.read("executorch/backends/vulkan/partitioner/vulkan_partitioner.py").decode()
        version = archive.read("executorch/version.py").decode()
        record = archive.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
    assert "VKBENCH_MARK = 1" in text
    assert "executorch/backends/vulkan/vkbench_added.py" in names
    if removed_text is not None:
        assert "executorch/backends/vulkan/test/test_vulkan_delegate_header.py" not in names
    assert "executorch/backends/vulkan/utils.py.bak" not in names
    assert any(n.endswith(".so") for n in names)  # native parts from the base
    assert "c0ffee" in version and "+aot." in version
    assert len(record.splitlines()) == len(names)


def test_needs_native_pieces_fails_with_one_line(checkout: Path, tmp_path: Path, capfd) -> None:
    target = checkout / "backends/vulkan/partitioner/vulkan_partitioner.py"
    original = target.read_text()
    try:
        # Python from the future: a pybinding the 1.5.1 _C does not export (portable_lib re-exports _C)
        target.write_text("from executorch.extension.pybindings.portable_lib import "
                          "_vkbench_symbol_from_the_future\n" + original)
        code = _build(checkout, tmp_path, "--smoke",
                      "executorch.backends.vulkan.partitioner.vulkan_partitioner")
    finally:
        target.write_text(original)
    assert code == 1
    lines = [line for line in capfd.readouterr().err.splitlines() if "FAILED" in line]
    assert len(lines) == 1
    assert "needs native pieces the base wheel lacks" in lines[0]
    assert "_vkbench_symbol_from_the_future" in lines[0]
    assert not list(tmp_path.glob("*.whl"))


def test_link_makes_the_base_env_importable(tmp_path: Path) -> None:
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    run_env = {**os.environ, "PYTHONPATH": str(ROOT), "VKBENCH_BASE_PYTHON": sys.executable}
    subprocess.run([python, "-m", "vkbench.build", "aot", "link"], check=True, env=run_env)
    out = subprocess.run([python, "-c", "import vkbench.versions, yaml, sys; print(sys.prefix)"],
                         check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    assert out.stdout.strip() == str(env)


def test_asv_dispatch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[list[str]] = []
    fake = types.ModuleType("vkbench.build.full")
    fake.main = lambda argv: calls.append(argv) or 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vkbench.build.full", fake)
    monkeypatch.setattr("vkbench.build.full", fake, raising=False)
    monkeypatch.setenv("VKBENCH_BUILD", "full")
    monkeypatch.setenv("VKBENCH_EVENT_TRACER", "OFF")
    assert build_main.main(["asv-build", "--checkout", "/src", "--out", str(tmp_path)]) == 0
    assert calls[-1][:5] == ["/src", "--out", str(tmp_path / "venv"), "--tracer", "off"]
    assert build_main.main(["full", "x", "--out", "y"]) == 0 and calls[-1] == ["x", "--out", "y"]
    monkeypatch.setenv("VKBENCH_BUILD", "nonsense")
    with pytest.raises(SystemExit, match="VKBENCH_BUILD"):
        build_main.main(["asv-build", "--checkout", "/src", "--out", str(tmp_path)])
    assert build_main.main(["bogus"]) == 2


def test_asv_conf_and_derived_configs(tmp_path: Path) -> None:
    from asv.util import load_json

    config = load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    assert config["matrix"] == {"env": {"VKBENCH_BUILD": ["aot"]}}
    assert all("vkbench.build asv-" in c for c in config["build_command"] + config["install_command"])
    derived = build_main.derived_config(env_dir=str(tmp_path))
    assert "{conf_dir}" not in json.dumps(derived) and str(ROOT) in derived["build_command"][0]
    out = tmp_path / "full.conf.json"
    assert build_main.main(["conf", "--out", str(out)]) == 0
    full = json.loads(out.read_text())
    assert full["matrix"]["env"] == {"VKBENCH_BUILD": ["full"], "VKBENCH_EVENT_TRACER": ["ON", "OFF"]}
