"""An emulated arm64 CPU for ncnn's own ARM kernels: qemu-user runs an aarch64 Python with ncnn's aarch64
wheel, so a check can ask for the CPU a phone has (`s.ncnn.run(..., cpu="cortex-a76")`).

ncnn picks its ARM code paths from the CPU's features at run time (fp16 arithmetic from ARMv8.2, bf16,
dot products), and qemu reports the features of the model it emulates. The pieces, all under
`<root>/.kb/tools/arm64/`:

    root/                 Debian bookworm's aarch64 Python 3.11 and the libraries it links, unpacked
                          (debootstrap's first stage only: no binfmt_misc needed, qemu -L finds them)
    site-ncnn-<version>/  ncnn's aarch64 wheel of that version and numpy's, unpacked

`kb tools build arm64` makes them (downloads: Debian's packages and the two wheels); `runner()` says how
to start a worker on an emulated CPU, or raises Unavailable saying how to get one.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from convkb import paths
from convkb.engines.base import Unavailable
from convkb.errors import KBError

QEMU = "qemu-aarch64-static"
SUITE = "bookworm"  # its python3.11 is the 3.11 the wheels are built for
PACKAGES = "python3.11-minimal,libpython3.11-stdlib"
PYTHON = "usr/bin/python3.11"
HOW = "kb tools build arm64 (needs qemu-user-static and debootstrap: apt-get install qemu-user-static debootstrap)"


def home(root: Path | None = None) -> Path:
    return paths.state("tools", root) / "arm64"


def site(ncnn_version: str, root: Path | None = None) -> Path:
    return home(root) / f"site-ncnn-{ncnn_version}"


def runner(cpu: str, ncnn_version: str) -> tuple[list[str], dict[str, str]]:
    """The command that starts this machine's kb worker in an aarch64 Python on `cpu` (a qemu CPU model,
    e.g. cortex-a76), and the environment it needs."""
    qemu = shutil.which(QEMU)
    sysroot, pkgs = home() / "root", site(ncnn_version)
    if qemu is None or not (sysroot / PYTHON).is_file() or not pkgs.is_dir():
        raise Unavailable(f"ncnn: no emulated arm64 CPU with ncnn {ncnn_version} here: {HOW}")
    kb = str(Path(__file__).resolve().parents[2])  # convkb.child and the workers are pure Python
    return [qemu, "-cpu", cpu, "-L", str(sysroot), str(sysroot / PYTHON)], {"PYTHONPATH": f"{kb}:{pkgs}"}


def _run(argv: list[str], what: str) -> None:
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise KBError("kb tools build arm64", f"{what} failed: {(p.stderr or p.stdout).strip().splitlines()[-1:]}")


def build(ncnn_version: str | None = None) -> Path:
    """Make the aarch64 Python (once) and the site of `ncnn_version` (default: the installed ncnn)."""
    for tool in (QEMU, "debootstrap", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise KBError("kb tools build arm64", f"{tool} is not installed: apt-get install qemu-user-static debootstrap")
    ncnn_version = ncnn_version or importlib.metadata.version("ncnn")
    base = home()
    base.mkdir(parents=True, exist_ok=True)
    sysroot = base / "root"
    if not (sysroot / PYTHON).is_file():
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            _run(["debootstrap", "--foreign", "--arch=arm64", "--variant=minbase", f"--include={PACKAGES}", SUITE,
                  tmp], "debootstrap")
            # the first stage downloads and unpacks the base; the included packages are only downloaded
            for deb in sorted(Path(tmp, "var/cache/apt/archives").glob("*.deb")):
                _run(["dpkg-deb", "-x", str(deb), tmp], f"unpacking {deb.name}")
            shutil.rmtree(sysroot, ignore_errors=True)
            os.rename(tmp, sysroot)
            os.mkdir(tmp)  # for TemporaryDirectory's cleanup
    pkgs = site(ncnn_version)
    if not pkgs.is_dir():
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            wheels = Path(tmp, "wheels")
            numpy = importlib.metadata.version("numpy")
            _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                  "--python-version", "3.11", "--platform", "manylinux2014_aarch64", "--platform",
                  "manylinux_2_17_aarch64", "--platform", "manylinux_2_28_aarch64", "-d", str(wheels),
                  f"ncnn=={ncnn_version}", f"numpy=={numpy}"], "pip download of the aarch64 wheels")
            unpacked = Path(tmp, "site")
            for whl in wheels.glob("*.whl"):
                with zipfile.ZipFile(whl) as z:
                    z.extractall(unpacked)
            # extractall drops the execute bits; the wheels' shared libraries need none
            os.rename(unpacked, pkgs)
    return pkgs
