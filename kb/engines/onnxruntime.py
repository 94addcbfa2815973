"""onnxruntime: the reference engine, and the quantizer some entries start from."""

from __future__ import annotations

from pathlib import Path

from kb import child
from kb.compare import Outputs
from kb.engines.base import Engine


class OnnxRuntime(Engine):
    name = "onnxruntime"

    def run(self, model: Path, case: str) -> Outputs:
        out = self.s.path(f"{model.stem}.ort.npz")
        self.s.step(child.run_function(f"onnxruntime run {model.name}", "kb.workers.onnxruntime:run",
                                 model=str(model), inputs=str(self.s.artifacts.inputs(case)), out=str(out)),
                    produces=[out])
        return Outputs.load(case, out, "onnxruntime")

    def quantize(self, case: str, method: str, fmt: str = "QDQ", **options) -> Path:
        """method: 'static' (calibrated on the case's inputs) or 'dynamic'; fmt: 'QDQ' or 'QOperator'."""
        out = self.s.path(f"{case}.{method}-{fmt.lower()}.onnx")
        self.s.step(child.run_function(f"onnxruntime quantize_{method} ({fmt})", "kb.workers.onnxruntime:quantize",
                                 model=str(self.s.artifacts.onnx(case)), inputs=str(self.s.artifacts.inputs(case)),
                                 out=str(out), method=method, fmt=fmt, options=options),
                    produces=[out])
        return out

