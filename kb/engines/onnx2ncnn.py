"""onnx2ncnn: ncnn's legacy ONNX converter. Not on PyPI or in Debian, so it is optional:
found through $ONNX2NCNN or on PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kb.child import run_command
from kb.engines.base import Engine


def _tool() -> str | None:
    return os.environ.get("ONNX2NCNN") or shutil.which("onnx2ncnn")


class Onnx2Ncnn(Engine):
    name = "onnx2ncnn"

    @classmethod
    def missing(cls) -> str | None:
        tool = _tool()
        if tool and os.access(tool, os.X_OK):
            return None
        return ("onnx2ncnn not found: it is not on PyPI or in Debian; build it from ncnn's tools/onnx "
                "and put it on PATH or set ONNX2NCNN=/path/to/onnx2ncnn")

    @classmethod
    def version(cls) -> str | None:
        tool = _tool()
        return f"external ({tool})" if tool else None

    def convert(self, model: Path) -> tuple[Path, Path]:
        param, bin = self.s.path(f"{model.stem}.param"), self.s.path(f"{model.stem}.bin")
        self.s.step(run_command(f"onnx2ncnn {model.name}", [_tool(), str(model), str(param), str(bin)],
                                shown=f"onnx2ncnn {model.name} {param.name} {bin.name}"),
                    produces=[param, bin])
        return param, bin
