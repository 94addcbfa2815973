import numpy as np

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
# pnnx stores weights as fp16 by default: a Conv or Linear head differs from torch by up to 7.9e-4 (measured).
FP16 = dict(atol=1e-3)


def _scores(s, case, op):
    """The original case's ONNX with its `op` node cut off: the model up to the scores, the same weights and input."""
    import onnx
    import onnx.utils

    model = onnx.load(str(s.artifacts.onnx(case)))
    scores = next(n for n in model.graph.node if n.op_type == op).input[0]
    path = s.path(f"{case}-scores.onnx")
    onnx.utils.extract_model(str(s.artifacts.onnx(case)), str(path), ["in0"], [scores])
    param, bin = s.pnnx.convert(path, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], batch=True).arrays["out0"]


@checks.workaround("pnnx", "post-process", needs=["ncnn"])
def onnx_argmax_outside(s):
    """The argmax model without its ArgMax, through pnnx / ncnn; numpy's argmax over ncnn's scores, compared with
    the original's torch.argmax."""
    got = np.argmax(_scores(s, "argmax", "ArgMax"), axis=1)[:, None]
    return s.against(Outputs("argmax", {"out0": got}, "ncnn + np.argmax"), s.artifacts.reference("argmax"))


@checks.workaround("pnnx", "post-process", needs=["ncnn"], **FP16)
def onnx_topk_outside(s):
    """The topk model without its TopK, through pnnx / ncnn; numpy's top 3 over ncnn's scores, compared with the
    original's torch.topk."""
    scores = _scores(s, "topk", "TopK")
    indices = np.argsort(-scores, axis=1, kind="stable")[:, :3]
    values = np.take_along_axis(scores, indices, axis=1)
    got = Outputs("topk", {"out0": values, "out1": indices}, "ncnn + np.argsort")
    return s.against(got, s.artifacts.reference("topk"))
