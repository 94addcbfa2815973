"""kb (the `kb` command's package) is a regular package: imported from anywhere it is one folder, and a
second checkout on the path replaces it whole instead of merging into it (as the namespace package once did)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOW = "import kb; print(kb.__file__); print(list(kb.__path__))"


def where(cwd: Path, pythonpath: str = "") -> list[str]:
    """kb.__file__ and kb.__path__ in a fresh interpreter started in `cwd` (outside the repository, so
    kb comes from the installation, not from the current folder)."""
    p = subprocess.run([sys.executable, "-c", SHOW], cwd=cwd, capture_output=True, text=True,
                       env={"PYTHONPATH": pythonpath, "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_kb_is_one_regular_package(tmp_path):
    # An editable install made before kb/__init__.py existed maps it as a namespace (kb.__file__
    # None): `pip install -e .` again.
    assert where(tmp_path) == [str(ROOT / "kb" / "__init__.py"), str([str(ROOT / "kb")])]


def test_a_second_checkout_does_not_merge(tmp_path):
    other = tmp_path / "second-clone" / "kb"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    assert where(tmp_path, str(other.parent)) == [str(other / "__init__.py"), str([str(other)])]
