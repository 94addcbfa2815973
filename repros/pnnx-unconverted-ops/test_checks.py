import numpy as np

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
SIGS = ["op-not-registered", "expression-not-registered"]
# pnnx stores weights as fp16 by default: a Conv or Linear head differs from torch by up to 7.9e-4 (measured).
FP16 = dict(atol=1e-3)
VARIANTS = ["where-gt-opset17", "where-gt-dynamo", "where-ge-opset13", "masked-fill-lt", "le-mask-onnxsim",
            "ne-mask-opset13", "masked-fill-const-mask", "argmax-head", "argmax-dynamo", "argmin-onnxsim",
            "topk-opset13", "topk-dynamo", "topk-values-only", "cumsum-opset13", "cumsum-channels-dynamo",
            "cumsum-onnxsim", "layernorm-std-onnx", "layernorm-std-opset13", "layernorm-std-dynamo", "leaky-relu", "maximum", "amax-opset17",
            "gelu-erf-opset13"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], s.artifacts.case(case)["outputs"], batch=True)


def ts(s, case):
    return via_pnnx(s, s.artifacts.torchscript(case), case)


def onnx(s, case):
    return via_pnnx(s, s.artifacts.onnx(case), case)


# ---- the bug, through TorchScript (torch.jit.trace, then pnnx model.pt) --------------------------

@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_std(s):
    """A hand-written LayerNorm with x.std(-1, keepdim=True) (Tencent/ncnn#4699): pnnx keeps torch.std."""
    return ts(s, "layernorm-std")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_where(s):
    """torch.where(x > 0, x, 0.1 * x): torch.gt and torch.where."""
    return ts(s, "where-gt")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_argmax(s):
    return ts(s, "argmax")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_topk(s):
    return ts(s, "topk")


# ---- the bug, through ONNX (torch.onnx.export(..., dynamo=False, opset_version=17), then pnnx model.onnx) ----

@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_where(s):
    """Greater -> Where."""
    return onnx(s, "where-gt")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_argmax(s):
    return onnx(s, "argmax")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_topk(s):
    """TopK with both outputs used: the constant k stays a pnnx.Expression, TopK stays TopK."""
    return onnx(s, "topk")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_cumsum(s):
    """CumSum: the constant axis stays a pnnx.Expression, CumSum stays CumSum."""
    return onnx(s, "cumsum")


# ---- controls: ops pnnx once left unconverted, on the same path (no op the trigger names) -------

@checks.control("pnnx", needs=["ncnn"], **FP16)
def torchscript_norm(s):
    """y / torch.norm(x, dim=1, keepdim=True), as in Tencent/ncnn#3827 (torch.norm left unconverted)."""
    return ts(s, "norm")


@checks.control("pnnx", needs=["ncnn"])
def onnx_erf(s):
    """A gelu written with torch.erf (Tencent/ncnn#4699), from ONNX: Erf."""
    return onnx(s, "gelu-erf")


@checks.control("pnnx", needs=["ncnn"])
def torchscript_arange(s):
    """x + torch.arange(n) (Tencent/ncnn#6413 names torch.arange)."""
    return ts(s, "arange")


# ---- workarounds ---------------------------------------------------------------------------------

@checks.workaround("pnnx", "rewrite-op", needs=["ncnn"])
def torchscript_std_rewritten(s):
    """std written out: sqrt(sum((x - mean)^2) / (n - 1)), through TorchScript."""
    return ts(s, "layernorm-std-rewritten")


@checks.workaround("pnnx", "rewrite-op", needs=["ncnn"])
def torchscript_where_by_ceil(s):
    """where(x > 0, a, b) as b + ceil(clamp(x, 0, 1)) * (a - b), through TorchScript."""
    return ts(s, "where-by-ceil")


@checks.workaround("pnnx", "rewrite-op", needs=["ncnn"])
def onnx_where_by_ceil(s):
    return onnx(s, "where-by-ceil")


@checks.workaround("pnnx", "rewrite-op", needs=["ncnn"])
def onnx_cumsum_as_matmul(s):
    """cumsum over the last axis as x @ triu(ones(n, n)), through ONNX."""
    return onnx(s, "cumsum-as-matmul")


@checks.workaround("pnnx", "other-route", needs=["ncnn"])
def onnx_std(s):
    """The LayerNorm with x.std(), from ONNX: the exporter has already written std as ReduceMean, Sub, Mul, Sqrt."""
    return onnx(s, "layernorm-std-via-onnx")


@checks.workaround("pnnx", "other-route", needs=["ncnn"])
def torchscript_cumsum(s):
    """torch.cumsum from TorchScript."""
    return ts(s, "cumsum")


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


@checks.variants("pnnx", SIGS, VARIANTS, needs=["ncnn"], **FP16)
def variant(s, case):
    """pnnx from the ONNX export, run by ncnn; compared with torch."""
    return onnx(s, case)
