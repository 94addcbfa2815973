"""mnn, inside a child process (see kb.child): no kb imports beyond the standard library."""

from __future__ import annotations


def convert(argv: list[str]) -> None:
    import _tools

    _tools.mnnconvert(argv)


def quantize(argv: list[str]) -> None:
    import _tools

    _tools.mnnquant(argv)


def run(model: str, feed: str, out: str, outputs: list[str]) -> None:
    import MNN.expr as F
    import MNN.nn as nn
    import numpy as np

    with np.load(feed) as z:
        inputs = {k: z[k].astype(np.float32) for k in z.files}
    net = nn.load_module_from_file(model, list(inputs), outputs)
    xs = [F.const(a.flatten().tolist(), list(a.shape), F.NCHW) for a in inputs.values()]
    ys = net.forward(xs)  # always a list: a single Var argument can crash MNN
    if len(ys) != len(outputs):
        raise SystemExit(f"MNN forward returned {len(ys)} outputs, expected {len(outputs)}")
    np.savez(out, **{n: np.array(F.convert(y, F.NCHW).read()) for n, y in zip(outputs, ys)})
