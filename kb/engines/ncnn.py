"""ncnn: the pip runtime, running .param/.bin pairs written by a converter or by hand."""

from __future__ import annotations

from pathlib import Path

from kb import child
from kb.compare import Outputs
from kb.engines.base import Engine


class NCNN(Engine):
    name = "ncnn"
    module = "ncnn"
    install = "pip install ncnn"

    def run(self, param: Path, bin: Path | None, case: str, inputs: list[str], outputs: list[str],
            batch: bool = False) -> Outputs:
        """Run blobs `inputs` <- the case's inputs (in order); read blobs `outputs` as its outputs.

        Classic ncnn models (onnx2ncnn, hand-written) have no batch axis, so a leading 1 is dropped;
        pnnx's models keep it (`batch=True`), as the *_ncnn.py script pnnx writes feeds them.
        """
        out = self.s.path(f"{param.stem}.ncnn-out.npz")
        case_outputs = list(self.s.artifacts.reference(case).arrays)
        self.s.step(child.run_function(f"ncnn run {param.name}", "kb.workers.ncnn:run",
                                 param=str(param), bin=str(bin) if bin else None,
                                 feed=str(self.s.artifacts.inputs(case)), out=str(out), batch=batch,
                                 blobs_in=inputs, blobs_out=dict(zip(outputs, case_outputs))),
                    produces=[out])
        return Outputs.load(case, out, f"ncnn {self.version()}")

    def write_param(self, name: str, text: str) -> Path:
        """A hand-written .param (weightless layers only), e.g. what a converter is known to emit."""
        path = self.s.path(name)
        path.write_text(text.strip() + "\n")
        return path

