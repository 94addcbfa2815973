from convkb.checks import Checks

checks = Checks(__file__)
VIEW = ["shape-not-supported", "shape-not-registered"]
RESIZE = ["resize-sizes-empty", "shape-not-supported", "shape-not-registered"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C, and pnnx writes fp16 weights:
# measured up to 8.6e-4 abs (pnnx before 20261020; 3.2e-4 on 20261020), 5.8e-5 for onnx2ncnn.
TOL = dict(atol=1e-3, rtol=1e-3)


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


def via_pnnx(s, case):
    param, bin = s.pnnx.convert(s.artifacts.torchscript(case), case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.bug("onnx2ncnn", VIEW, needs=["ncnn"])
def onnx2ncnn_view_dynamic_batch(s):
    """view(x.size(0), -1), exported with a dynamic batch axis: onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, "view-dynamic-batch")


@checks.bug("onnx2ncnn", RESIZE, needs=["ncnn"])
def onnx2ncnn_resize_to_size(s):
    """interpolate(size=(h * 2, w * 2)): the sizes are computed from Shape even with a fixed input."""
    return via_onnx2ncnn(s, "resize-to-size")


@checks.bug("ncnn", ["shape-not-registered"], needs=["onnx2ncnn"])
def ncnn_loads_shape_layer(s):
    """The runtime half, keyed by the ncnn release: the .param that onnx2ncnn a4d2ea1 writes for
    resize-to-size, loaded by that ncnn. It shows only that the ncnn release has no layer named Shape."""
    return via_onnx2ncnn(s, "resize-to-size")


@checks.workaround("onnx2ncnn", "onnxsim-fixed-shape", needs=["ncnn"], **TOL)
def onnx2ncnn_view_fixed_onnxsim(s):
    """Export without dynamic axes, run onnx-simplifier: the Reshape gets a constant shape."""
    return via_onnx2ncnn(s, "view-fixed-onnxsim")


@checks.workaround("onnx2ncnn", "onnxsim-fixed-shape", needs=["ncnn"], **TOL)
def onnx2ncnn_resize_fixed_onnxsim(s):
    """The same for the upsampling: onnx-simplifier folds Shape -> Slice -> Concat into constant sizes."""
    return via_onnx2ncnn(s, "resize-fixed-onnxsim")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_view(s):
    """pnnx from TorchScript (fp16 weight storage: differences of a few 1e-4)."""
    return via_pnnx(s, "view-dynamic-batch")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_resize(s):
    return via_pnnx(s, "resize-to-size")


@checks.variants("onnx2ncnn", RESIZE, ["view-opset13", "view-opset17", "view-batch-channels", "view-dynamo",
                                       "resize-double", "resize-like-input", "resize-dynamo", "view-static-near-miss",
                                       "flatten-near-miss", "resize-scale-factor-near-miss",
                                       "resize-onnxsim-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
