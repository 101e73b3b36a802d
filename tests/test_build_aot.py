"""``aot`` build mode: base selection, the index client, overlay rules, versioning, failure lines, linking,
asv dispatch (through ``vkbench build``)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import urllib.error
import zipfile
from pathlib import Path

import pytest

from vkbench import cli
from vkbench.build import aot, base_release, full, hooks, index, overlay

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("executorch.exir")
INSTALLED = importlib.metadata.version("executorch").split("+")[0]


# ---------------------------------------------------------------------------
# base selection: the releases the index really has for this interpreter


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """The real list from PyPI (``ttl_s=0``: always asked), cached in a tmp wheelhouse."""
    return index.available_releases(tmp_path_factory.mktemp("wheelhouse"), ttl_s=0)


def test_real_index_lists_installable_releases(releases: tuple[str, ...]) -> None:
    assert INSTALLED in releases  # the base env's own release has a wheel for this interpreter
    assert "1.3.1" in releases and "1.3.0" not in releases  # 1.3.0 was never uploaded
    assert "0.1.0" not in releases  # yanked
    assert list(releases) == sorted(releases, key=base_release._vkey)


def test_nearest_release_on_the_real_list(releases: tuple[str, ...]) -> None:
    newest = releases[-1]
    major, minor = base_release._vkey(newest)[:2]
    assert base_release.nearest_release("1.3.0", releases) == "1.3.1"  # same line, the wheel that exists
    assert base_release.nearest_release("1.4.0a0", releases).startswith("1.4.")  # development towards 1.4
    assert base_release.nearest_release("1.4.0", releases) == "1.4.0"  # a release tag: itself
    assert base_release.nearest_release(f"{major}.{minor + 1}.0a0", releases) == newest  # main
    assert base_release.nearest_release(None, releases) == newest
    with pytest.raises(aot.AotError, match="no executorch release fits version 0.0.1"):
        base_release.nearest_release("0.0.1", releases)


@pytest.mark.parametrize(("version", "base"), [
    ("1.6.0a0", "1.5.1"),   # main after the 1.5 branch cut: no 1.6 release yet
    ("1.5.0a0", "1.5.1"),   # development towards 1.5: newest 1.5.x
    ("1.5.1", "1.5.1"),
    ("1.4.0", "1.4.0"),     # a release tag: itself
    ("1.3.0", "1.3.1"),     # a tag the index lacks: its line's release
    ("1.2.0.dev20250101", "1.2.0"),
])
def test_nearest_release_rules(version: str, base: str) -> None:
    releases = ("1.5.1", "1.2.0", "1.3.1", "1.4.0", "1.4.1", "1.5.0")  # any order
    assert base_release.nearest_release(version, releases) == base


def test_compatible_releases_keeps_installable_final_wheels() -> None:
    from packaging.tags import Tag

    here = [Tag("cp312", "cp312", "manylinux_2_28_x86_64"), Tag("py3", "none", "any")]
    files = [
        {"filename": "executorch-1.0.0-cp312-cp312-manylinux_2_28_x86_64.whl"},
        {"filename": "executorch-1.1.0-cp312-cp312-manylinux_2_28_x86_64.whl", "yanked": "broken"},
        {"filename": "executorch-1.2.0-cp312-cp312-macosx_14_0_arm64.whl"},   # other platform
        {"filename": "executorch-1.2.0-cp311-cp311-manylinux_2_28_x86_64.whl"},  # other interpreter
        {"filename": "executorch-1.3.0.tar.gz"},                              # sdist: pip won't build it
        {"filename": "executorch-1.4.0rc1-cp312-cp312-manylinux_2_28_x86_64.whl"},
        {"filename": "executorch-0.9.0-py3-none-any.whl", "yanked": False},
        {"filename": "not a wheel name.whl"},
    ]
    assert index.compatible_releases(files, here) == ["0.9.0", "1.0.0"]


def test_fetch_index_reads_pep503_html(tmp_path: Path) -> None:
    """Mirrors behind a firewall often serve only the HTML simple index."""
    import http.server
    import threading

    page = (b'<html><body><a href="x/executorch-1.3.1-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=0">'
            b'executorch-1.3.1-cp312-cp312-manylinux_2_28_x86_64.whl</a>\n'
            b'<a href="y" data-yanked="">executorch-1.2.0-cp312-cp312-manylinux_2_28_x86_64.whl</a>'
            b'</body></html>')

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        files = index.fetch_index(f"http://127.0.0.1:{server.server_port}/simple/executorch/")
    finally:
        server.shutdown()
    assert [f["yanked"] for f in files] == [False, True]
    assert index.compatible_releases(files) == ["1.3.1"]


def _unreachable(url: str) -> list[dict]:
    raise urllib.error.URLError(f"no route to {url}")


def test_offline_uses_the_cached_list(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    fetched = index.available_releases(tmp_path, fetch=lambda url: [
        {"filename": "executorch-1.3.1-py3-none-any.whl"}, {"filename": "executorch-1.4.0-py3-none-any.whl"}])
    assert fetched == ("1.3.1", "1.4.0") and index.releases_cache(tmp_path).is_file()
    # fresh cache: the index is not asked at all
    assert index.available_releases(tmp_path, fetch=_unreachable) == fetched
    # stale cache and no index: the cache, and a line saying so
    assert index.available_releases(tmp_path, fetch=_unreachable, ttl_s=0) == fetched
    assert "unreachable" in capfd.readouterr().err


def test_offline_without_cache_fails_with_one_line(tmp_path: Path, checkout: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(index, "fetch_index", _unreachable)
    wheelhouse = tmp_path / "wheels"
    code = cli.main(["build", "aot", "build", str(checkout), "--out", str(tmp_path / "out"),
                     "--wheelhouse", str(wheelhouse), "--smoke", ""])
    assert code == 1
    failed = [line for line in capfd.readouterr().err.splitlines() if "FAILED" in line]
    assert len(failed) == 1
    assert "cannot list executorch releases" in failed[0] and "no route to" in failed[0]
    assert str(index.releases_cache(wheelhouse)) in failed[0]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.whl"))


def test_package_dirs_src_layout_and_legacy(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"executorch" = "src/executorch"\n')
    assert overlay.package_dirs(tmp_path) == {"executorch": tmp_path / "src/executorch"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"executorch.exir" = "exir"\n"executorch.backends" = "backends"\n'
        '"other" = "x"\n')
    assert overlay.package_dirs(tmp_path) == {"executorch.backends": tmp_path / "backends",
                                          "executorch.exir": tmp_path / "exir"}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return overlay.source_tree_from_installed(tmp_path_factory.mktemp("et") / "executorch")


def _build(checkout: Path, out: Path, *extra: str) -> int:
    """Build on the installed release's wheel (base selection is tested above, against the index)."""
    return cli.main(["build", "aot", "build", str(checkout), "--out", str(out),
                     "--commit", "c0ffee" * 6 + "abcd", "--base", INSTALLED, *extra])


def test_source_tree_looks_like_upstream(checkout: Path) -> None:
    assert (checkout / "src/executorch/exir").is_symlink()
    assert (checkout / "backends/vulkan/partitioner/vulkan_partitioner.py").is_file()
    assert (checkout / "version.txt").read_text().strip() == INSTALLED


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
    assert wheels[0].name.startswith(f"executorch-{INSTALLED}+aot.")
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
    subprocess.run([python, "-m", "vkbench", "build", "aot", "link"], check=True, env=run_env)
    out = subprocess.run([python, "-c", "import vkbench.core.versions, yaml, sys; print(sys.prefix)"],
                         check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    assert out.stdout.strip() == str(env)
    # no wheel declared a flatc console script here: the base env's binary is linked in, and a
    # benchmark subprocess finds it on PATH as asv sets it (the env's bin dir first)
    flatc = env / "bin" / "flatc"
    assert flatc.is_symlink() and flatc.resolve().parts[-4:] == ("executorch", "data", "bin", "flatc")
    asv_path = f"{env / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    call = "import subprocess; subprocess.run(['flatc', '--version'], check=True)"
    version = subprocess.run([python, "-c", call], check=True, capture_output=True, text=True,
                             env={"PATH": asv_path})
    assert version.stdout.startswith("flatc version")


def test_asv_dispatch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """asv-build picks the mode from the environment; ``build full`` hands its options over typed."""
    calls: list[full.FullBuild] = []
    monkeypatch.setattr(full, "build", lambda options: calls.append(options) or 0)
    monkeypatch.setenv("VKBENCH_BUILD", "full")
    monkeypatch.setenv("VKBENCH_EVENT_TRACER", "OFF")
    assert cli.main(["build", "asv-build", "--checkout", "/src", "--out", str(tmp_path)]) == 0
    assert (calls[-1].checkout, calls[-1].out, calls[-1].tracer, calls[-1].record) == (
        Path("/src"), tmp_path / "venv", "off", tmp_path / "build.json")
    assert cli.main(["build", "full", "x", "--out", "y", "--no-ccache", "--extra-site", "s"]) == 0
    assert (calls[-1].checkout, calls[-1].out, calls[-1].tracer) == (Path("x"), Path("y"), "on")
    assert calls[-1].extra_sites == (Path("s"),) and not calls[-1].ccache
    monkeypatch.setenv("VKBENCH_BUILD", "nonsense")
    with pytest.raises(SystemExit, match="VKBENCH_BUILD"):
        cli.main(["build", "asv-build", "--checkout", "/src", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as bogus:
        cli.main(["build", "bogus"])
    assert bogus.value.code == 2


def test_asv_conf_and_derived_configs(tmp_path: Path) -> None:
    from asv.util import load_json

    config = load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    assert config["matrix"] == {"env": {"VKBENCH_BUILD": ["aot"]}}
    hooks_run = config["build_command"] + config["install_command"]
    assert all("python -m vkbench build asv-" in c for c in hooks_run)
    derived = hooks.derived_config(env_dir=str(tmp_path))
    assert "{conf_dir}" not in json.dumps(derived) and str(ROOT) in derived["build_command"][0]
    out = tmp_path / "full.conf.json"
    assert cli.main(["build", "conf", "--out", str(out)]) == 0
    full_conf = json.loads(out.read_text())
    assert full_conf["matrix"]["env"] == {"VKBENCH_BUILD": ["full"], "VKBENCH_EVENT_TRACER": ["ON", "OFF"]}
