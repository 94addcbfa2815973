"""A program that loads the converted model and runs it three times (30 with MODE=module-30), releasing it in between
(a service that loads a model per request, a test loop), with MNN's Module API (MODE=module) or its Session API
(MODE=session). Run by runpy in a fresh Python; globals MODEL, FEED, OUTPUTS, OUT, MODE."""

import gc

import MNN
import MNN.expr as F
import MNN.nn as nn
import numpy as np

RUNS = 30 if MODE == "module-30" else 3  # noqa: F821 -- the crash check's: where the heap's layout lets 3 loads run through

with np.load(FEED) as z:  # noqa: F821 -- set by the check
    inputs = {k: np.ascontiguousarray(z[k].astype(np.float32)) for k in z.files}
for run in range(RUNS):
    if MODE.startswith("module"):  # noqa: F821
        net = nn.load_module_from_file(MODEL, list(inputs), OUTPUTS)  # noqa: F821
        xs = [F.const(a.flatten().tolist(), list(a.shape), F.NCHW, F.float) for a in inputs.values()]
        ys = net.forward(xs)
        got = {n: np.array(F.convert(y, F.NCHW).read()) for n, y in zip(OUTPUTS, ys)}  # noqa: F821
        del net, xs, ys
    else:
        net = MNN.Interpreter(MODEL)  # noqa: F821
        sess = net.createSession({"numThread": 1})
        for name, a in inputs.items():
            net.resizeTensor(net.getSessionInput(sess, name), a.shape)
        net.resizeSession(sess)
        for name, a in inputs.items():
            net.getSessionInput(sess, name).copyFrom(
                MNN.Tensor(a.shape, MNN.Halide_Type_Float, a, MNN.Tensor_DimensionType_Caffe))
        if net.runSession(sess) != 0:
            raise SystemExit("runSession failed")
        got = {}
        for name in OUTPUTS:  # noqa: F821
            o = net.getSessionOutput(sess, name)
            got[name] = np.array(o.getData(), dtype=np.float32).reshape(o.getShape())
            del o
        del sess, net
    gc.collect()
    print(f"run {run + 1}: {({k: v.tolist() for k, v in got.items()})}", flush=True)
np.savez(OUT, **got)  # noqa: F821
