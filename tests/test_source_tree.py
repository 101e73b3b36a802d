"""Moving one kept source tree from commit to commit (``vkbench build tree``): only differing files written.

Two small git repos in tmp: an "executorch" whose ``backends/vulkan/third-party/volk`` is a submodule
pinned at two commits of a "volk" mirror laid out as ``fetch`` lays mirrors (``owner+name/repo``), a
``third-party/flatbuffers`` submodule (the build includes its headers), and an ``examples/`` folder and a
submodule outside the runtime that the export leaves alone. No build.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from git_repos import git

from vkbench.build import source_tree
from vkbench.cli import main

VOLK = "backends/vulkan/third-party/volk"
FLATBUFFERS = "third-party/flatbuffers"


def _commit(repo: Path, message: str, files: dict[str, str | None]) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def _pin(repo: Path, path: str, sha: str) -> None:
    (repo / path).mkdir(parents=True, exist_ok=True)  # an unpopulated submodule (else `add -A` drops it)
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")


@pytest.fixture
def mirrors(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "mirrors"
    volk = tmp_path / "volk-work"
    volk.mkdir()
    git(volk, "init", "-q", "-b", "main")
    pins = [_commit(volk, "v1", {"volk.h": "1", "volk.c": "1"}), _commit(volk, "v2", {"volk.h": "2"})]
    git(tmp_path, "clone", "-q", "--bare", str(volk), str(root / "zeux+volk" / "repo"))
    flatbuffers = tmp_path / "flatbuffers-work"
    flatbuffers.mkdir()
    git(flatbuffers, "init", "-q", "-b", "main")
    header = _commit(flatbuffers, "h", {"include/flatbuffers/flatbuffers.h": "fb"})
    git(tmp_path, "clone", "-q", "--bare", str(flatbuffers), str(root / "google+flatbuffers" / "repo"))
    et = tmp_path / "et-work"
    et.mkdir()
    git(et, "init", "-q", "-b", "main")
    (et / ".gitmodules").write_text(f'[submodule "{VOLK}"]\n\tpath = {VOLK}\n\turl = https://github.com/zeux/volk\n'
                                    '[submodule "third-party/other"]\n\tpath = third-party/other\n'
                                    '\turl = https://github.com/someone/other.git\n'
                                    f'[submodule "{FLATBUFFERS}"]\n\tpath = {FLATBUFFERS}\n'
                                    '\turl = https://github.com/google/flatbuffers.git\n')
    git(et, "add", ".gitmodules")
    _pin(et, VOLK, pins[0])
    _pin(et, "third-party/other", "c" * 40)
    _pin(et, FLATBUFFERS, header)
    first = _commit(et, "start", {"backends/vulkan/runtime/Foo.cpp": "1", "runtime/core/error.h": "1",
                                  "examples/big.bin": "large", "docs/x.md": "1"})
    _pin(et, VOLK, pins[1])
    second = _commit(et, "change Foo, drop docs, bump volk", {"backends/vulkan/runtime/Foo.cpp": "2",
                                                                "docs/x.md": None})
    git(tmp_path, "clone", "-q", "--bare", str(et), str(root / "pytorch+executorch" / "repo"))
    return root, [first, second]


def test_the_tree_moves_by_writing_only_what_differs(mirrors: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, (first, second) = mirrors
    mirror, tree = root / "pytorch+executorch" / "repo", tmp_path / "tree"
    done, lacking = source_tree.move_tree(mirror, first, tree, root)
    assert lacking == [] and len(done.added) == 7 and not done.modified and not done.deleted
    assert (tree / VOLK / "volk.h").read_text() == "1" and not (tree / "examples").exists()
    assert (tree / FLATBUFFERS / "include/flatbuffers/flatbuffers.h").read_text() == "fb"  # build full needs
    assert not (tree / "third-party" / "other").exists()  # not the runtime's: never exported
    (tree / "third-party" / "other").mkdir(parents=True)
    (tree / "third-party" / "other" / "kept.h").write_text("someone's checkout")
    old = time.time() - 3600
    os.utime(tree / "runtime/core/error.h", (old, old))
    done, _ = source_tree.move_tree(mirror, second, tree, root)
    assert sorted(done.modified) == ["backends/vulkan/runtime/Foo.cpp", f"{VOLK}/volk.h"]
    assert done.deleted == ["docs/x.md"] and done.added == []
    assert os.stat(tree / "runtime/core/error.h").st_mtime == pytest.approx(old)  # unchanged: not rewritten
    assert (tree / "third-party" / "other" / "kept.h").exists()  # other submodules are left as they are


def test_the_cli_says_what_it_wrote_and_names_bad_input(mirrors: tuple[Path, list[str]], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root, (first, _) = mirrors
    mirror = root / "pytorch+executorch" / "repo"
    assert main(["build", "tree", first[:8], "--mirror", str(mirror), "--tree", str(tmp_path / "t")]) == 0
    assert f"at {first[:8]}: 7 added, 0 modified, 0 deleted" in capsys.readouterr().out
    assert main(["build", "tree", "nosuch", "--mirror", str(mirror), "--tree", str(tmp_path / "t")]) == 2
    assert "nosuch" in capsys.readouterr().err
    (root / "zeux+volk").rename(root / "gone")
    assert main(["build", "tree", first, "--mirror", str(mirror), "--tree", str(tmp_path / "u")]) == 2
    assert "no mirror of https://github.com/zeux/volk" in capsys.readouterr().err
    assert source_tree.mirror_of("https://github.com/a/b.git", root) == root / "a+b" / "repo"
