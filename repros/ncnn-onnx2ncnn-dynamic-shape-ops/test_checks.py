from kb.checks import Checks

checks = Checks(__file__)
VIEW = ["shape-not-supported", "shape-not-registered"]
RESIZE = ["resize-sizes-empty", "shape-not-supported", "shape-not-registered"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C, and pnnx writes fp16 weights:
# a correct result differs from torch by up to a few 1e-4.
TOL = dict(atol=2e-3, rtol=2e-3)

# What onnx2ncnn writes for upsample-alone (tools/onnx/onnx2ncnn.cpp): it prints "Shape not supported yet!",
# passes Shape through under its ONNX name, and writes the Resize as an Interp whose size comes from that blob.
UPSAMPLE_AS_ONNX2NCNN_WRITES_IT = """
7767517
7 8
Input            in0                      0 1 in0
Split            splitncnn_input0         1 2 in0 in0_splitncnn_0 in0_splitncnn_1
MemoryData       /Constant_3_output_0     0 1 /Constant_3_output_0 0=2
Shape            /Shape                   1 1 in0_splitncnn_1 /Shape_output_0
Crop             /Slice                   1 1 /Shape_output_0 /Slice_output_0 -23309=0 -23310=0
Concat           /Concat                  2 1 /Slice_output_0 /Constant_3_output_0 /Concat_output_0 0=0
Interp           /Resize                  2 1 in0_splitncnn_0 /Concat_output_0 out0 0=1 1=1.000000e+00 2=1.000000e+00 3=0 4=0 6=0
"""


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


@checks.bug("ncnn", RESIZE)
def ncnn_loads_shape_layer(s):
    """The runtime half, with the pip ncnn alone: the .param onnx2ncnn writes for upsample-alone."""
    param = s.ncnn.write_param("upsample-alone.param", UPSAMPLE_AS_ONNX2NCNN_WRITES_IT)
    return s.ncnn.run(param, None, "upsample-alone", ["in0"], ["out0"])


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
