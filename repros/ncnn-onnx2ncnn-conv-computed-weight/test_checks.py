from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["protobuf-index-abort"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_weight_norm_conv(s):
    """onnx2ncnn, then the ncnn runtime, on a weight-normed Conv2d exported with do_constant_folding=False."""
    return s.onnx2ncnn.run("weight-norm-conv")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_plain_conv(s):
    """A plain Conv2d exported the same way (no constant folding) converts and matches torch."""
    return s.onnx2ncnn.run("plain-conv")


@checks.workaround("onnx2ncnn", "remove-weight-norm", needs=["ncnn"])
def onnx2ncnn_weight_norm_removed(s):
    """parametrize.remove_parametrizations before export, still without constant folding."""
    return s.onnx2ncnn.run("weight-norm-removed")


@checks.workaround("onnx2ncnn", "onnxsim", needs=["ncnn"])
def onnx2ncnn_weight_norm_onnxsim(s):
    """The same unfolded export, run through onnx-simplifier before onnx2ncnn."""
    return s.onnx2ncnn.run("weight-norm-onnxsim")


@checks.workaround("onnx2ncnn", "constant-folding", needs=["ncnn"])
def onnx2ncnn_weight_norm_folded(s):
    """The same model exported with torch.onnx.export's default do_constant_folding=True."""
    return s.onnx2ncnn.run("weight-norm-folded")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
