"""Debian packages as data: apt-get download and dpkg -x, never an install (the corpus build scripts' one way in)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
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


_LICENCE_NAMES = re.compile(
    r"GNU Free Documentation License|Creative Commons Attribution[- ]Share ?Alike|"
    r"(?:GNU )?(?:Lesser |Library )?General Public License",
    re.IGNORECASE,
)


def licences(root: Path, package: str) -> list[str]:
    """The licences a package's Debian copyright file declares: its "License:" fields (machine-readable
    format), else the licence names its free text mentions."""
    path = root / "usr/share/doc" / package / "copyright"
    if not path.is_file():
        return []
    text = path.read_text(errors="replace")
    names = {line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("License:")}
    names = {n for n in names if n} or set(_LICENCE_NAMES.findall(" ".join(text.split())))
    return sorted(names)


def main(
    doc: str,
    packages: Sequence[str],
    build: Callable[[Path, Path, dict[str, str]], dict],
    default_out: Path,
    summary: Callable[[dict], object],
    argv: list[str] | None = None,
) -> int:
    """A build script's command line: --debs (already downloaded) or a download, unpack, build, print summary."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--debs", type=Path, help="folder holding the .deb files already (no download)")
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        debs = args.debs or Path(tmp) / "debs"
        if args.debs is None:
            download(debs, packages)
        manifest = build(Path(tmp), args.out, unpack(debs, Path(tmp), packages))
    print(json.dumps(summary(manifest), indent=1, ensure_ascii=False))
    return 0
