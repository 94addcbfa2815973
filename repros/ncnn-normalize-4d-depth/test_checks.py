from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["first-slice-only"]
# pnnx stores the conv weights as fp16 by default: a correct conversion is up to ~1e-3 off torch here. The bug's
# outputs are off by more than 1 (the un-normalized slices).
TOL = dict(atol=2e-3, rtol=1e-3)
VARIANTS = ["opset13", "opset18", "dynamo", "onnxsim", "volume-conv3x3x3", "video-embedding-block", "scaled-l2norm",
            "two-frames", "depth-1-near-miss", "conv2d-near-miss", "conv2d-dynamo-near-miss"]


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx_conv3d_normalize(s):
    """Conv3d, then F.normalize(y, dim=1) on its (1, 8, 4, 5, 6) output; pnnx from TorchScript writes
    'Normalize 0=0 1=1 ... 4=1 9=1' on the 4-D blob (c=8, d=4, h=5, w=6), run by this ncnn."""
    return s.pnnx.to_ncnn("conv3d-normalize", source="torchscript")


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx_onnx_conv3d_normalize(s):
    """The same model through its ONNX export (ReduceL2, Clip, Expand, Div), which pnnx fuses into Normalize."""
    return s.pnnx.to_ncnn("conv3d-normalize", source="onnx")


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx_conv3d_normalize_arm64(s):
    """The pnnx model of pnnx-conv3d-normalize on an emulated ARM Cortex-A76 (ARMv8.2, fp16 arithmetic), with
    ncnn's aarch64 wheel of this release: where phones run it."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript("conv3d-normalize"), "conv3d-normalize")
    return s.ncnn.run(param, bin, "conv3d-normalize", ["in0"], ["out0"], cpu="cortex-a76")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def onnx2ncnn_normalize(s):
    """The 5-D model input, ReLU, F.normalize(dim=1), after onnx-simplifier: onnx2ncnn writes 'Normalize 1=1
    2=1e-12 3=1 9=1', run by this ncnn."""
    return s.onnx2ncnn.run("onnx2ncnn-normalize")


@checks.control("ncnn", needs=["pnnx"], **TOL)
def pnnx_conv2d_normalize(s):
    """The same F.normalize after a Conv2d: a 4-D tensor, an ncnn 3-D blob."""
    return s.pnnx.to_ncnn("conv2d-normalize", source="torchscript")


@checks.control("ncnn", needs=["onnx2ncnn"])
def onnx2ncnn_normalize_4d(s):
    return s.onnx2ncnn.run("onnx2ncnn-normalize-4d")


@checks.control("pnnx", needs=["ncnn"], **TOL)
def pnnx_release_conv3d_normalize(s):
    """Keyed by the pnnx release: what each pnnx writes for the Conv3d model, run by the installed ncnn."""
    return s.pnnx.to_ncnn("conv3d-normalize", source="torchscript")


@checks.workaround("ncnn", "fold-depth", needs=["pnnx"], **TOL)
def pnnx_conv3d_fold_depth(s):
    """F.normalize on y.reshape(1, 8, 4*5, 6), reshaped back: a Normalize on a 3-D blob; judged against the
    original's torch output."""
    return s.pnnx.to_ncnn("conv3d-fold-depth", source="torchscript")


@checks.workaround("ncnn", "written-out", needs=["onnx2ncnn"])
def onnx2ncnn_written_out(s):
    """The written-out norm on onnx2ncnn's path: Reduction (L2), Clip, BinaryOp."""
    return s.onnx2ncnn.run("onnx2ncnn-written-out")


@checks.workaround("ncnn", "written-out", needs=["pnnx"], **TOL)
def pnnx_conv3d_written_out(s):
    """y / torch.linalg.vector_norm(y, dim=1, keepdim=True).clamp(min=1e-12): Reduction, Clip, BinaryOp."""
    return s.pnnx.to_ncnn("conv3d-written-out", source="torchscript")


@checks.variants("ncnn", BUG, VARIANTS, needs=["pnnx"], **TOL)
def variant(s, case):
    """pnnx from the ONNX export, then this ncnn."""
    return s.pnnx.to_ncnn(case, source="onnx")
