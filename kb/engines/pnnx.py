"""pnnx: ncnn's recommended converter, from TorchScript or ONNX to ncnn (and pnnx) files."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.child import run_command
from kb.engines.base import Engine


class PNNX(Engine):
    name = "pnnx"
    module = "pnnx"
    install = "pip install pnnx"

    def convert(self, model: Path, case: str) -> tuple[Path, Path]:
        """Convert a .pt or .onnx file; return the ncnn (param, bin) it writes."""
        import pnnx

        work = self.s.path(f"pnnx-{model.suffix[1:]}")
        work.mkdir(exist_ok=True)
        src = work / model.name  # pnnx writes its outputs next to its input
        shutil.copy(model, src)
        shapes = ",".join(str(s).replace(" ", "") for s in self.s.artifacts.case(case)["inputs"].values())
        param, bin = work / f"{src.stem}.ncnn.param", work / f"{src.stem}.ncnn.bin"
        # Named explicitly: pnnx otherwise derives names from the input's, with '-' turned into '_'.
        argv = [pnnx.EXEC_PATH, str(src), f"inputshape={shapes}", f"ncnnparam={param}", f"ncnnbin={bin}"]
        self.s.step(run_command(f"pnnx {model.name}", argv, cwd=work, timeout=300,
                                shown=f"pnnx {model.name} inputshape={shapes} ncnnparam={param.name} "
                                      f"ncnnbin={bin.name}"),
                    produces=[param, bin])
        return param, bin
