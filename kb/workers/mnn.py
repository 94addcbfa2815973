"""mnn, inside a child process (see kb.child): no kb imports beyond the standard library."""

from __future__ import annotations


def convert(argv: list[str]) -> None:
    import _tools

    _tools.mnnconvert(argv)


def quantize(argv: list[str]) -> None:
    import _tools

    _tools.mnnquant(argv)


def _feed(path: str) -> dict:
    """The inputs as MNN takes them: float32, and int32 for any integer input (an int64 state or index, which
    MNN's converter stores as int32)."""
    import numpy as np

    with np.load(path) as z:
        return {k: np.ascontiguousarray(z[k].astype(np.float32 if z[k].dtype.kind in "fb" else np.int32))
                for k in z.files}


# kb's precision names -> MNN.expr.PrecisionMode's
_PRECISION = {"high": "High", "low": "Low", "low_bf16": "Low_BF16"}


def run(model: str, feed: str, out: str, outputs: list[str], precision: str = "normal") -> None:
    """precision: MNN's precision mode (normal, high, low: fp16 where the CPU has fp16 arithmetic; low_bf16:
    Precision_Low_BF16, bf16 where MNN is built with MNN_SUPPORT_BF16, else MNN's fp32 backend)."""
    import MNN.expr as F
    import MNN.nn as nn
    import numpy as np

    inputs = _feed(feed)
    # MNN's default otherwise, with no keyword an older pymnn may lack
    mode = {} if precision == "normal" else {"precision_mode": getattr(F.PrecisionMode, _PRECISION[precision])}
    net = nn.load_module_from_file(model, list(inputs), outputs, **mode)
    xs = [F.const(a.flatten().tolist(), list(a.shape), F.NCHW, F.int if a.dtype == np.int32 else F.float)
          for a in inputs.values()]
    ys = net.forward(xs)  # always a list: a single Var argument can crash MNN
    if len(ys) != len(outputs):
        raise SystemExit(f"MNN forward returned {len(ys)} outputs, expected {len(outputs)}")
    np.savez(out, **{n: np.array(F.convert(y, F.NCHW).read()) for n, y in zip(outputs, ys)})


def session(model: str, feed: str, out: str, outputs: list[str], precision: str = "normal") -> None:
    """MNN's Session API, as C++ and older Python code use it: Interpreter -> createSession -> resize ->
    runSession. It cannot run control flow (While), which the Module API (`run`) can."""
    import MNN
    import numpy as np

    inputs = _feed(feed)
    net = MNN.Interpreter(model)
    # pymnn's createSession reads "low", "high" and "Low_BF16" (anything else is normal)
    sess = net.createSession({"numThread": 1, **({} if precision == "normal" else
                                                 {"precision": "Low_BF16" if precision == "low_bf16" else precision})})
    for name, a in inputs.items():
        net.resizeTensor(net.getSessionInput(sess, name), a.shape)
    net.resizeSession(sess)
    for name, a in inputs.items():
        net.getSessionInput(sess, name).copyFrom(
            MNN.Tensor(a.shape, MNN.Halide_Type_Int if a.dtype == np.int32 else MNN.Halide_Type_Float, a,
                       MNN.Tensor_DimensionType_Caffe))
    code = net.runSession(sess)
    print("runSession returned", code)
    if code != 0:
        raise SystemExit(f"runSession returned error code {code}")
    res = {}
    for name in outputs:
        o = net.getSessionOutput(sess, name)
        host = MNN.Tensor(o.getShape(), MNN.Halide_Type_Float, np.zeros(o.getShape(), np.float32),
                          MNN.Tensor_DimensionType_Caffe)
        o.copyToHostTensor(host)
        res[name] = np.array(host.getData(), dtype=np.float32).reshape(o.getShape())
    np.savez(out, **res)


def run_typed(model: str, feed: str, out: str, outputs: list[str]) -> None:
    """As `run`, but each input keeps its integer type (MNN's int32 for int64, as its converter stores int64);
    outputs are written in the type MNN gives them. For kb.conform, whose ONNX node cases feed integer tensors."""
    import MNN.expr as F
    import MNN.nn as nn
    import numpy as np

    types = {"float32": F.float, "int32": F.int, "int64": F.int, "int8": F.int8, "uint8": F.uint8}
    with np.load(feed) as z:
        inputs = {k: z[k] for k in z.files}
    net = nn.load_module_from_file(model, list(inputs), outputs)
    xs = []
    for a in inputs.values():
        a = a.astype(np.int32) if a.dtype == np.int64 else a
        xs.append(F.const(np.ascontiguousarray(a).flatten().tolist(), list(a.shape), F.NCHW, types[a.dtype.name]))
    ys = net.forward(xs)
    if len(ys) != len(outputs):
        raise SystemExit(f"MNN forward returned {len(ys)} outputs, expected {len(outputs)}")
    res = {}
    for n, y in zip(outputs, ys):
        if y.data_format == F.NC4HW4:
            y = F.convert(y, F.NCHW)
        # an empty output (a zero in its shape) has nothing to read: read() raises on it
        res[n] = np.zeros(y.shape, np.float32) if 0 in y.shape else np.array(y.read())
    np.savez(out, **res)
