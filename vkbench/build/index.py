"""The package index client: which ``executorch`` releases have a wheel pip can install here.

The ``aot`` build overlays a commit's Python on a release wheel, so it must know which releases
the index really has for this interpreter (there is no 1.3.0 wheel, only 1.3.1; old releases
lack newer Pythons). The answer is kept in the wheelhouse next to the downloaded wheels: a
range of commits costs one index request, and a machine behind a firewall works from the
cached list. The ledger also reads the index, for a release's upload date.
"""

from __future__ import annotations

import html
import json
import os
import re
import sysconfig
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from vkbench import settings
from vkbench.build.messages import AotError, log

if TYPE_CHECKING:
    from packaging.tags import Tag

#: The package index ``auto`` asks which releases have a wheel for this interpreter
#: (``$VKBENCH_AOT_INDEX`` > ``$PIP_INDEX_URL`` > PyPI; PEP 691 JSON or PEP 503 HTML).
DEFAULT_INDEX = "https://pypi.org/simple"
#: A cached release list younger than this is used without asking the index again,
#: so a range of commits costs one index request, and none behind a firewall.
INDEX_TTL_S = 6 * 3600


def index_url() -> str:
    """The simple-index page of ``executorch`` that pip would download from."""
    base = settings.text("VKBENCH_AOT_INDEX") or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX
    return base.rstrip("/") + "/executorch/"


def fetch_index(url: str, timeout: float = 20) -> list[dict]:
    """The index's file entries (``filename``, ``yanked``), from PEP 691 JSON or PEP 503 HTML.

    Mirrors behind a firewall (devpi, Artifactory, ...) often serve only the
    HTML form, so both are read.
    """
    request = urllib.request.Request(url, headers={
        "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read().decode("utf-8", "replace")
        kind = response.headers.get("Content-Type", "")
    if "json" in kind:
        return list(json.loads(body)["files"])
    files = []
    for attrs, text in re.findall(r"<a\s([^>]*)>([^<]+)</a>", body):
        files.append({"filename": html.unescape(text.strip()),
                      "yanked": "data-yanked" in attrs})
    return files


def _packaging() -> tuple[ModuleType, ModuleType]:
    """``packaging.tags`` and ``packaging.utils``: the package, else pip's vendored copy.

    asv runs the build in its bare virtualenv before anything is installed
    (pip is there, ``packaging`` may not be); imported only when releases
    are listed, so ``link`` works in an env without either.
    """
    try:
        from packaging import tags, utils
    except ImportError:
        from pip._vendor.packaging import tags, utils
    return tags, utils


def compatible_releases(files: Iterable[dict], tags: Iterable[Tag] | None = None) -> list[str]:
    """Final releases that have a non-yanked wheel installable by this interpreter, oldest first."""
    tags_module, utils = _packaging()
    supported = set(tags_module.sys_tags() if tags is None else tags)
    versions = set()
    for entry in files:
        name = str(entry.get("filename", ""))
        if entry.get("yanked") or not name.endswith(".whl"):
            continue
        try:
            _, version, _, wheel_tags = utils.parse_wheel_filename(name)
        except utils.InvalidWheelFilename:
            continue
        if not (version.is_prerelease or version.is_devrelease) and wheel_tags & supported:
            versions.add(version)
    return [str(v) for v in sorted(versions)]


def releases_cache(wheelhouse: Path) -> Path:
    """Where the release list is kept (next to the downloaded wheels), per interpreter and platform.

    Named from ``interpreter_name()``/``sysconfig.get_platform()``, not from
    the first of ``sys_tags()``, whose order differs between ``packaging``
    versions (asv's env and the base env may have different ones).
    """
    tags, _ = _packaging()
    key = f"{tags.interpreter_name()}{tags.interpreter_version()}-{sysconfig.get_platform()}"
    return wheelhouse / f"executorch-releases.{re.sub(r'[^A-Za-z0-9]+', '_', key)}.json"


def available_releases(wheelhouse: Path, fetch: Callable[[str], list[dict]] | None = None,
                       ttl_s: float = INDEX_TTL_S) -> tuple[str, ...]:
    """Releases pip can fetch for this interpreter: from the index, else the cached list.

    A cache younger than ``ttl_s`` is used as is (one index request per
    range, not per commit). An unreachable index falls back to the cache;
    with neither, one line names the index and the missing cache file.
    ``fetch`` defaults to :func:`fetch_index` (looked up per call, so tests
    can replace it).
    """
    cache = releases_cache(wheelhouse)
    url = index_url()
    cached_index, cached = _read_cache(cache)
    if cached and cached_index == url and time.time() - cache.stat().st_mtime < ttl_s:
        return cached
    try:
        releases = compatible_releases((fetch or fetch_index)(url))
    except (OSError, ValueError, KeyError) as error:  # URLError and timeouts are OSErrors
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        if not cached:
            raise AotError(f"cannot list executorch releases: index {url} unreachable ({reason}) "
                           f"and no cached list at {cache}") from None
        log(f"index {url} unreachable ({reason}); using the release list cached in {cache} "
            f"(from {cached_index})")
        return cached
    if not releases:
        raise AotError(f"index {url} has no executorch wheel for this interpreter "
                       f"({next(iter(_packaging()[0].sys_tags()))})")
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(f"{cache.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps({"index": url, "releases": releases}, indent=1) + "\n")
    partial.replace(cache)
    return tuple(releases)


def _read_cache(cache: Path) -> tuple[str | None, tuple[str, ...]]:
    """``(index, releases)`` from the cache; ``(None, ())`` if absent or unreadable."""
    try:
        data = json.loads(cache.read_text())
        return str(data["index"]), tuple(str(r) for r in data["releases"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, ()
