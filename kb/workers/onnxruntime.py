"""onnxruntime, inside a child process (see kb.child): no kb imports beyond the standard library."""

from __future__ import annotations


def run(model: str, inputs: str, out: str) -> None:
    import numpy as np
    import onnxruntime as ort

    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    with np.load(inputs) as z:
        feeds = {k: z[k] for k in z.files}
    names = [o.name for o in sess.get_outputs()]
    np.savez(out, **dict(zip(names, sess.run(names, feeds))))


def quantize(model: str, inputs: str, out: str, method: str, fmt: str, options: dict) -> None:
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
