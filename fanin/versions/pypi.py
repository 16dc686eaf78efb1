"""What PyPI knows about a framework's releases: does a version exist, is it yanked, which is newest.

Used by `upgrade` (and `bisect` later) before anything is installed, so a typo
is one clear line instead of a resolver traceback.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from fanin.model.errors import FaninError

INDEX = "https://pypi.org/pypi"
# FANIN_PYPI_INDEX points at another JSON API root: a mirror, or a recorded answer as files
# (file:///…/<package>/json), which is how `watch --dry-run` is tested without the network.
INDEX_VARIABLE = "FANIN_PYPI_INDEX"


class RegistryError(FaninError):
    """PyPI answered that the package or release does not exist (bad input)."""


class RegistryUnreachable(RegistryError):
    """PyPI could not be asked, or answered with an error (could not run)."""

    exit_code = 3


@dataclass(frozen=True)
class Release:
    version: str
    uploaded: str
    yanked: bool
    prerelease: bool = False

    @property
    def as_released(self) -> str:
        """The `exclude_newer` moment of an as-released lock: one day after the upload."""
        moment = _dt.datetime.fromisoformat(self.uploaded.replace("Z", "+00:00")) + _dt.timedelta(days=1)
        return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def releases(package: str, timeout: float = 20.0, prereleases: bool = False) -> list[Release]:
    """Every release with files, oldest first: final releases only unless `prereleases`."""
    url = f"{os.environ.get(INDEX_VARIABLE) or INDEX}/{package}/json"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = json.load(response)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise RegistryError(f"PyPI has no package {package!r}") from None
        raise RegistryUnreachable(f"PyPI answered HTTP {exc.code} for {package}; try again later") from None
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RegistryUnreachable(
            f"cannot reach PyPI to look up {package} ({reason}); check the network or name an exact version"
        ) from None
    except json.JSONDecodeError:
        raise RegistryUnreachable(f"PyPI sent a malformed answer for {package}; try again later") from None
    found: list[tuple[Version, Release]] = []
    for version, files in data.get("releases", {}).items():
        if not files:
            continue
        try:
            parsed = Version(version)
        except InvalidVersion:
            continue
        early = parsed.is_prerelease or parsed.is_devrelease
        if early and not prereleases:
            continue
        uploaded = min(f["upload_time_iso_8601"] for f in files)
        found.append((parsed, Release(version, uploaded, all(f.get("yanked") for f in files), early)))
    return [release for _, release in sorted(found, key=lambda pair: pair[0])]


def resolve(package: str, wanted: str) -> Release:
    """`wanted` is an exact version (pre-releases included when named) or `latest` (final releases only)."""
    known = releases(package, prereleases=True)
    available = [r for r in known if not r.yanked and not r.prerelease]
    if wanted.lower() == "latest":
        if not available:
            raise RegistryError(f"{package} has no installable release on PyPI")
        return available[-1]
    for release in known:
        if Version(release.version) == Version(wanted):
            if release.yanked:
                raise RegistryError(f"{package} {release.version} was yanked from PyPI; pick another release")
            return release
    newest = available[-1].version if available else "none"
    raise RegistryError(f"{package} has no release {wanted} on PyPI (newest is {newest})")
