"""Run a converted model with MNN's Python API, feeding the input one way or another (run by runpy in a child).

Globals set by the check: MODEL, FEED (npz of NCHW float32 inputs), OUT, OUTPUTS, MODE. The user's image is
taken to be held NHWC (as OpenCV and PIL give it); MODE says how it reaches the NCHW model input.
"""

import MNN
import MNN.expr as F
import MNN.nn as nn
import numpy as np

with np.load(FEED) as z:  # noqa: F821 -- set by the check
    nchw = {k: z[k].astype(np.float32) for k in z.files}
name, x = next(iter(nchw.items()))
nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # the user's buffer

if MODE.startswith("session"):  # noqa: F821
    net = MNN.Interpreter(MODEL)  # noqa: F821
    sess = net.createSession({"numThread": 1})
    inp = net.getSessionInput(sess, name)
    if MODE == "session-nhwc-as-caffe":  # the mistake: NHWC bytes declared as Caffe (NCHW)
        host = MNN.Tensor(x.shape, MNN.Halide_Type_Float, nhwc, MNN.Tensor_DimensionType_Caffe)
    elif MODE == "session-nhwc-as-tensorflow":  # the same bytes declared as what they are
        host = MNN.Tensor(nhwc.shape, MNN.Halide_Type_Float, nhwc, MNN.Tensor_DimensionType_Tensorflow)
    elif MODE == "session-transposed":  # transposed to NCHW in numpy (a non-contiguous view), declared Caffe
        host = MNN.Tensor(x.shape, MNN.Halide_Type_Float, nhwc.transpose(0, 3, 1, 2), MNN.Tensor_DimensionType_Caffe)
    else:
        raise SystemExit(f"unknown mode {MODE}")  # noqa: F821
    inp.copyFrom(host)
    print("copyFrom", MODE, "host shape", host.getShape())  # noqa: F821
    code = net.runSession(sess)
    print("runSession returned", code)
    res = {}
    for out_name in OUTPUTS:  # noqa: F821
        o = net.getSessionOutput(sess, out_name)
        h = MNN.Tensor(o.getShape(), MNN.Halide_Type_Float, np.zeros(o.getShape(), np.float32),
                       MNN.Tensor_DimensionType_Caffe)
        o.copyToHostTensor(h)
        res[out_name] = np.array(h.getData(), dtype=np.float32).reshape(o.getShape())
else:
    module = nn.load_module_from_file(MODEL, [name], OUTPUTS)  # noqa: F821
    if MODE == "module-nhwc-as-nchw":  # the mistake: NHWC data given the NCHW shape and format
        v = F.const(nhwc, list(x.shape), F.NCHW)
    elif MODE == "module-nhwc-converted":  # declared NHWC, then converted to the model's NCHW
        v = F.convert(F.const(nhwc, list(nhwc.shape), F.NHWC), F.NCHW)
    else:
        raise SystemExit(f"unknown mode {MODE}")  # noqa: F821
    ys = module.forward([v])
    res = {n: np.array(F.convert(y, F.NCHW).read()) for n, y in zip(OUTPUTS, ys)}  # noqa: F821
np.savez(OUT, **res)  # noqa: F821
