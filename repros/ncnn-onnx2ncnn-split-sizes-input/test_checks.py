from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["load-model-failed", "wrong-shape", "wrong-output"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_split_block(s):
    """torch.split(y, [2, 6], dim=1) between convolutions, opset 13: onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("split-block")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_weightless_split(s):
    """torch.split(x, [1, 3]) with no weight after it: the sizes alone are lost."""
    return s.onnx2ncnn.run("weightless-split")


@checks.workaround("onnx2ncnn", "opset11", needs=["ncnn"])
def onnx2ncnn_opset11(s):
    """The same block exported at opset 11, where the sizes are the Split's attribute."""
    return s.onnx2ncnn.run("split-block-opset11")


@checks.workaround("onnx2ncnn", "slicing", needs=["ncnn"])
def onnx2ncnn_sliced(s):
    """The same block with its pieces cut by slicing (y[:, 0:2], y[:, 2:8])."""
    return s.onnx2ncnn.run("split-block-sliced")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
