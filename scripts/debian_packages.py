"""Debian packages as data: apt-get download and dpkg -x, never an install (the corpus build scripts' one way in)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


def download(debs: Path, packages: Sequence[str]) -> None:
    """apt-get download of every package into debs/ (no install)."""
    debs.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", *packages], cwd=debs, check=True)


def unpack(debs: Path, workdir: Path, packages: Sequence[str]) -> dict[str, str]:
    """dpkg -x of every package's .deb into workdir/<package>/; returns {package: version}."""
    versions = {}
    for name in packages:
        found = sorted(debs.glob(f"{name}_*.deb"))
        if not found:
            raise SystemExit(f"no {name}_*.deb in {debs}")
        subprocess.run(["dpkg", "-x", str(found[-1]), str(workdir / name)], check=True)
        versions[name] = subprocess.run(
            ["dpkg-deb", "-f", str(found[-1]), "Version"], check=True, capture_output=True, text=True
        ).stdout.strip()
    return versions
