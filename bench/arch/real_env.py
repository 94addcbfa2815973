"""The architecture bench's own venv for real implementations (transformers, timm): .kb/arch-real-venv.

The project's dependencies stay as they are: this venv sees /work/main/.venv's packages (torch 2.13 CPU,
onnx, onnxsim, onnxruntime) through a .pth file and installs only what the real models need on top,
with the main venv's versions as constraints, so pip never upgrades (or uninstalls) a shared package:

  transformers, timm        built from their Config classes / timm.create_model(pretrained=False):
                            no hub download
  torchvision               timm imports it; the release pinned to torch 2.13 (0.28.x)

    .venv/bin/python bench/arch/real_env.py          # create or complete the venv; print its versions
    .venv/bin/python bench/arch/real_env.py --check  # only print what it has (exit 1 if incomplete)
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV = ROOT / ".kb" / "arch-real-venv"
PYTHON = VENV / "bin" / "python"
MAIN_SITE = Path(sysconfig.get_paths(vars={"base": str(ROOT / ".venv"), "platbase": str(ROOT / ".venv")})["purelib"])
# Releases known to work with torch 2.13 here (transformers 5 needs torch >= 2.2; torchvision 0.28 is torch 2.13's)
WANTED = ["transformers==5.17.0", "timm==1.0.29", "torchvision==0.28.*"]
REPORTED = ("torch", "torchvision", "transformers", "timm", "onnx", "onnxsim", "onnxruntime", "huggingface_hub")


def versions(python: Path = PYTHON) -> dict[str, str]:
    """What the venv imports, by distribution (absent when missing), read in the venv's own interpreter."""
    code = ("import importlib.metadata as md, json\nout = {}\nfor d in %r:\n    try: out[d] = md.version(d)\n"
            "    except md.PackageNotFoundError: out[d] = 'absent'\nprint(json.dumps(out))" % (REPORTED,))
    import json

    return json.loads(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout)


def create() -> None:
    if not PYTHON.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    site = Path(subprocess.run([str(PYTHON), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # after the venv's own site-packages on sys.path: what is installed here shadows the main venv
    (site / "_main_venv.pth").write_text(str(MAIN_SITE) + "\n")
    freeze = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "pip", "freeze", "--exclude-editable"],
                            check=True, capture_output=True, text=True).stdout
    pins = [ln for ln in freeze.splitlines() if "==" in ln and not ln.startswith("#")]
    constraints = VENV / "constraints-main.txt"
    constraints.write_text("\n".join(pins) + "\n")
    subprocess.run([str(PYTHON), "-m", "pip", "install", "-c", str(constraints), *WANTED], check=True)


def main() -> int:
    if "--check" not in sys.argv:
        create()
    if not PYTHON.exists():
        print(f"no {VENV.relative_to(ROOT)}: run python bench/arch/real_env.py", file=sys.stderr)
        return 1
    got = versions()
    for k, v in got.items():
        print(f"{k} {v}")
    return 1 if "absent" in (got["torch"], got["transformers"]) else 0


if __name__ == "__main__":
    sys.exit(main())
