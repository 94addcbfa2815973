"""onnxruntime: the reference engine, and the quantizer some entries start from."""

from __future__ import annotations

from pathlib import Path

from kb.child import run_function
from kb.compare import Outputs
from kb.engines.base import Engine


class OnnxRuntime(Engine):
    name = "onnxruntime"
    module = "onnxruntime"
    install = "pip install onnxruntime"

    def run(self, model: Path, case: str) -> Outputs:
        out = self.s.path(f"{model.stem}.ort.npz")
        self.s.step(run_function(f"onnxruntime run {model.name}", "kb.engines.onnxruntime:child_run",
                                 model=str(model), inputs=str(self.s.artifacts.inputs(case)), out=str(out)),
                    produces=[out])
        return Outputs.load(case, out, "onnxruntime")

    def quantize(self, case: str, method: str, fmt: str = "QDQ", **options) -> Path:
        """method: 'static' (calibrated on the case's inputs) or 'dynamic'; fmt: 'QDQ' or 'QOperator'."""
        out = self.s.path(f"{case}.{method}-{fmt.lower()}.onnx")
        self.s.step(run_function(f"onnxruntime quantize_{method} ({fmt})", "kb.engines.onnxruntime:child_quantize",
                                 model=str(self.s.artifacts.onnx(case)), inputs=str(self.s.artifacts.inputs(case)),
                                 out=str(out), method=method, fmt=fmt, options=options),
                    produces=[out])
        return out


def child_run(model: str, inputs: str, out: str) -> None:
    import numpy as np
    import onnxruntime as ort

    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    with np.load(inputs) as z:
        feeds = {k: z[k] for k in z.files}
    names = [o.name for o in sess.get_outputs()]
    np.savez(out, **dict(zip(names, sess.run(names, feeds))))


def child_quantize(model: str, inputs: str, out: str, method: str, fmt: str, options: dict) -> None:
    import numpy as np
    from onnxruntime import quantization as q

    if method == "dynamic":
        q.quantize_dynamic(model, out, **options)
        return
    with np.load(inputs) as z:
        sample = {k: z[k] for k in z.files}
    rng = np.random.default_rng(0)
    batches = [sample] + [{k: rng.standard_normal(v.shape).astype(v.dtype) for k, v in sample.items()}
                          for _ in range(3)]

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.it = iter(batches)

        def get_next(self):
            return next(self.it, None)

    q.quantize_static(model, out, Reader(), quant_format=getattr(q.QuantFormat, fmt), **options)
