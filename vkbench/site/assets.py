"""Third-party assets of asv's web UI, vendored so the site works offline.

asv 0.6.6's ``index.html`` loads jQuery, Flot, Bootstrap, stupidtable and
blueimp-md5 from CDNs (code.jquery.com, cdnjs, jsdelivr), so with no network
the page stays blank. Each CDN URL is mapped here to one file of an exact npm
package version. The files live in ``vkbench/site/vendor/`` (committed, with
``manifest.json`` recording package, version, tarball integrity and file
sha256), are copied into each asv site at publish time, and can be refreshed
from the npm registry with ``vkbench site vendor`` (``npm pack`` into
``.asv/npm-cache``; no ``node_modules`` anywhere).

Differences from the CDN files: cdnjs serves minified Flot 0.8.3 plugins and
stupidtable 1.0.1; npm has Flot 0.8.3 unminified (same release) and
``stupid-table-plugin`` only as 1.1.3 (same ``$.fn.stupidtable`` API).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path

VENDOR_DIR = Path(__file__).resolve().parent / "vendor"
MANIFEST = VENDOR_DIR / "manifest.json"
NPM_CACHE = Path(__file__).resolve().parents[2] / ".asv" / "npm-cache"


@dataclass(frozen=True)
class Asset:
    cdn: str  #: substring of the CDN URL in asv's index.html
    package: str  #: npm package
    version: str  #: exact version
    member: str  #: path inside the npm tarball
    local: str  #: path under ``<site>/vendor/``


ASSETS: tuple[Asset, ...] = (
    Asset("code.jquery.com/jquery-3.3.1.min.js", "jquery", "3.3.1", "package/dist/jquery.min.js",
          "jquery.min.js"),
    Asset("flot/0.8.3/jquery.flot.min.js", "flot", "0.8.3", "package/jquery.flot.js", "jquery.flot.js"),
    Asset("flot/0.8.3/jquery.flot.time.min.js", "flot", "0.8.3", "package/jquery.flot.time.js",
          "jquery.flot.time.js"),
    Asset("flot/0.8.3/jquery.flot.selection.min.js", "flot", "0.8.3", "package/jquery.flot.selection.js",
          "jquery.flot.selection.js"),
    Asset("flot/0.8.3/jquery.flot.categories.min.js", "flot", "0.8.3",
          "package/jquery.flot.categories.js", "jquery.flot.categories.js"),
    Asset("flot-orderbars@1.0.0/js/jquery.flot.orderBars.js", "flot-orderbars", "1.0.0",
          "package/js/jquery.flot.orderBars.js", "jquery.flot.orderBars.js"),
    Asset("stupidtable/1.0.1/stupidtable.min.js", "stupid-table-plugin", "1.1.3",
          "package/stupidtable.min.js", "stupidtable.min.js"),
    Asset("blueimp-md5/2.19.0/js/md5.min.js", "blueimp-md5", "2.19.0", "package/js/md5.min.js", "md5.min.js"),
    Asset("bootstrap@3.1.1/dist/js/bootstrap.min.js", "bootstrap", "3.1.1",
          "package/dist/js/bootstrap.min.js", "bootstrap.min.js"),
    Asset("bootstrap@3.1.1/dist/css/bootstrap.min.css", "bootstrap", "3.1.1",
          "package/dist/css/bootstrap.min.css", "css/bootstrap.min.css"),
    # bootstrap.min.css loads its icon font from ../fonts/
    *(Asset("", "bootstrap", "3.1.1", f"package/dist/fonts/glyphicons-halflings-regular.{ext}",
            f"fonts/glyphicons-halflings-regular.{ext}") for ext in ("eot", "svg", "ttf", "woff")),
)


def _sri(data: bytes, algo: str = "sha512") -> str:
    return f"{algo}-" + base64.b64encode(hashlib.new(algo, data).digest()).decode()


def npm_tarball(package: str, version: str, cache: Path = NPM_CACHE) -> Path:
    """``<package>-<version>.tgz`` from the npm registry via ``npm pack`` (cached)."""
    cache.mkdir(parents=True, exist_ok=True)
    name = f"{package.replace('@', '').replace('/', '-')}-{version}.tgz"
    target = cache / name
    if not target.exists():
        if not shutil.which("npm"):
            raise RuntimeError("npm is not installed; cannot refresh vendored assets")
        subprocess.run(["npm", "pack", "--silent", f"{package}@{version}", "--pack-destination", str(cache)],
                       check=True, capture_output=True, text=True, timeout=300)
    return target


def vendor(cache: Path = NPM_CACHE, dest: Path = VENDOR_DIR) -> dict:
    """(Re)write ``vendor/`` and its manifest from npm tarballs."""
    manifest: dict = {"about": __doc__.split("\n\n")[0], "assets": []}
    for asset in ASSETS:
        tarball = npm_tarball(asset.package, asset.version, cache)
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(asset.member)
            if member is None:
                raise RuntimeError(f"{asset.member} not in {tarball.name}")
            data = member.read()
        target = dest / asset.local
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        manifest["assets"].append({
            **asdict(asset), "tarball_integrity": _sri(tarball.read_bytes()),
            "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
        })
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def check_vendor(dest: Path = VENDOR_DIR) -> list[str]:
    """Problems with the vendored files (missing, or not matching the manifest)."""
    if not (dest / "manifest.json").exists():
        return [f"{dest}/manifest.json missing"]
    problems = []
    for entry in json.loads((dest / "manifest.json").read_text())["assets"]:
        path = dest / entry["local"]
        if not path.exists():
            problems.append(f"{entry['local']} missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            problems.append(f"{entry['local']} does not match the manifest")
    return problems
