from convkb.checks import Checks

checks = Checks(__file__)
ABORT = ["protobuf-index-abort"]
# pnnx stores weights as fp16 by default; the clamp itself has none, so torch's values come back exactly
# (the conv variants go through onnx2ncnn, which keeps fp32 weights in the .bin).
TOL = dict(atol=1e-4, rtol=1e-3)


@checks.bug("onnx2ncnn", ABORT, needs=["ncnn"], **TOL)
def onnx2ncnn_clamp_min_dynamo(s):
    """torch.clamp(x, min=0.5) exported with dynamo=True: a Clip with two inputs (x, min)."""
    return s.onnx2ncnn.run("clamp-min-dynamo")


@checks.control("onnx2ncnn", needs=["ncnn"], **TOL)
def onnx2ncnn_relu6_dynamo(s):
    """F.relu6 from the same exporter: a Clip with three constant inputs."""
    return s.onnx2ncnn.run("relu6-dynamo")


@checks.control("onnx2ncnn", needs=["ncnn"], **TOL)
def onnx2ncnn_clamp_max_dynamo(s):
    """torch.clamp(x, max=0.5) from the same exporter: Clip(x, "", max), the missing min an empty name."""
    return s.onnx2ncnn.run("clamp-max-dynamo")


@checks.workaround("onnx2ncnn", "both-bounds", needs=["ncnn"], **TOL)
def onnx2ncnn_clamp_both_bounds(s):
    """torch.clamp(x, min=0.5, max=float("inf")): a Clip with three inputs."""
    return s.onnx2ncnn.run("clamp-both-bounds")


@checks.workaround("onnx2ncnn", "maximum", needs=["ncnn"], **TOL)
def onnx2ncnn_maximum(s):
    """torch.maximum(x, torch.tensor(0.5)): a Max, which onnx2ncnn writes as a BinaryOp with a scalar."""
    return s.onnx2ncnn.run("maximum")


@checks.workaround("onnx2ncnn", "dynamo-false", needs=["ncnn"], **TOL)
def onnx2ncnn_clamp_min_torchscript(s):
    """The same module exported with dynamo=False: Clip(x, min, "")."""
    return s.onnx2ncnn.run("clamp-min-torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_onnx_clamp_min_dynamo(s):
    """pnnx from the same dynamo ONNX file, then the ncnn runtime."""
    return s.pnnx.to_ncnn("clamp-min-dynamo", source="onnx")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_clamp_min(s):
    """pnnx from the traced TorchScript of the same module, then the ncnn runtime."""
    return s.pnnx.to_ncnn("clamp-min-dynamo", source="torchscript")


@checks.variants("onnx2ncnn", ABORT, needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
