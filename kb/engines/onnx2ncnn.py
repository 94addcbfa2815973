"""onnx2ncnn: ncnn's legacy ONNX converter. Not on PyPI or in Debian, so it is optional.

The tool is $ONNX2NCNN, else the build `kb tools build onnx2ncnn` cached under .kb/tools/
(kb.tools.build), else `onnx2ncnn` on PATH. Its version is the ncnn commit it was built from, read
from the `ncnn-commit` file beside the binary: the tool cannot tell, and a path is not a version.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from kb import child
from kb.engines.base import Engine

COMMIT_FILE = "ncnn-commit"
BUILD = "kb tools build onnx2ncnn"


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _tool() -> str | None:
    if os.environ.get("ONNX2NCNN"):
        return os.environ["ONNX2NCNN"]
    from kb.tools.build import built

    found = built()
    return str(found) if found else shutil.which("onnx2ncnn")


def _commit_files(tool: str) -> list[Path]:
    """`ncnn-commit` beside the tool, or beside what it links to (a symlink on PATH into a build)."""
    here = Path(tool).absolute().parent / COMMIT_FILE
    there = Path(tool).resolve().parent / COMMIT_FILE
    return [here] if here == there else [here, there]


def _commit(tool: str) -> str | None:
    for f in _commit_files(tool):
        try:
            text = f.read_text(errors="replace").strip()
        except OSError:
            continue
        first = text.split()[0].lower() if text else ""
        return first[:7] if re.fullmatch(r"[0-9a-f]{7,40}", first) else None
    return None


def convert_step(model: Path, param: Path, bin: Path, timeout: float | None = None,
                 memory: int | None = None) -> child.StepResult:
    """onnx2ncnn `model` into `param` and `bin`, in a child. Session-free, so kb.conform converts exactly as the
    checks do."""
    return child.run_command(f"onnx2ncnn {model.name}", [_tool(), str(model), str(param), str(bin)], timeout=timeout,
                             memory=memory, shown=f"onnx2ncnn {model.name} {param.name} {bin.name}")


class Onnx2Ncnn(Engine):
    name = "onnx2ncnn"

    @classmethod
    def missing(cls) -> str | None:
        if (env := os.environ.get("ONNX2NCNN")) and not _executable(env):
            return f"ONNX2NCNN={env}: not an executable file"
        tool = _tool()
        if not tool:
            from kb.tools.build import GET_SOURCES

            return ("onnx2ncnn not found: it is on neither PyPI nor Debian; build it from ncnn's sources: "
                    f"{GET_SOURCES} (needs the Debian packages g++ protobuf-compiler libprotobuf-dev); "
                    "or put a build on PATH or set ONNX2NCNN=/path/to/onnx2ncnn")
        if _commit(tool) is None:
            where = _commit_files(tool)[0]
            return (f"onnx2ncnn at {tool} does not say which ncnn commit it was built from: write the commit "
                    f"into {where}, or build it with `{BUILD}`")
        return None

    @classmethod
    def version(cls) -> str | None:
        """The ncnn commit the tool was built from (7 hex digits), or None: never a path."""
        tool = _tool()
        return _commit(tool) if tool and _executable(tool) else None

    def convert(self, model: Path) -> tuple[Path, Path]:
        model = self.s.source(model)
        param, bin = self.s.path(f"{model.stem}.param"), self.s.path(f"{model.stem}.bin")
        self.s.step(convert_step(model, param, bin), produces=[param, bin])
        return param, bin

    def run(self, case: str, model: Path | None = None, inputs=("in0",), outputs=("out0",)):
        """The onnx2ncnn path users take: convert the case's ONNX (or `model`), then run it on ncnn."""
        param, bin = self.convert(model or self.s.artifacts.onnx(case))
        return self.s.ncnn.run(param, bin, case, list(inputs), list(outputs))
