from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C, and pnnx stores fp16 weights by default:
# a correct Linear differs from torch by up to ~7e-4 here. The bug changes the output's shape.
TOL = dict(atol=1e-3, rtol=1e-3)
NO_PACKING = {"use_packing_layout": False}


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_addmm(s):
    """torch.addmm(b, x, w) on a (1, 8) input, w (8, 3): onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("addmm")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_classifier_head(s):
    """Conv, ReLU, global pooling, flatten, then torch.addmm(b, h, w) with w (16, 10), at batch 1."""
    return s.onnx2ncnn.run("classifier-head")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_gemm_1d_a(s):
    """The runtime half, keyed by the ncnn release: the Gemm layer (3 inputs, MemoryData weight and bias) that
    onnx2ncnn a4d2ea1 writes for the addmm, fed a 1-D blob of 8 values, run by this ncnn."""
    return s.onnx2ncnn.run("addmm")


@checks.control("ncnn", needs=["onnx2ncnn"])
def ncnn_gemm_two_rows(s):
    """The same Gemm layer fed two rows (a 2-D blob): keyed by the ncnn release."""
    return s.onnx2ncnn.run("addmm-two-rows")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_addmm_k7(s):
    """One row of 7 values: a 1-D blob that ncnn does not pack (7 is no multiple of 4)."""
    return s.onnx2ncnn.run("addmm-k7")


@checks.workaround("onnx2ncnn", "nn-linear", needs=["ncnn"], **TOL)
def onnx2ncnn_as_linear(s):
    """The same weights in nn.Linear (weight = w.t()): an InnerProduct."""
    return s.onnx2ncnn.run("as-linear")


@checks.workaround("onnx2ncnn", "nn-linear", needs=["ncnn"], **TOL)
def onnx2ncnn_head_as_linear(s):
    """The classifier's weights in nn.Linear: an InnerProduct after the Flatten."""
    return s.onnx2ncnn.run("head-as-linear")


@checks.workaround("onnx2ncnn", "matmul-add", needs=["ncnn"], **TOL)
def onnx2ncnn_matmul_add(s):
    """x @ w + b without onnx-simplifier: MatMul with a 2-D weight (an InnerProduct), then Add."""
    return s.onnx2ncnn.run("matmul-add")


@checks.workaround("ncnn", "no-packing-layout", needs=["onnx2ncnn"])
def ncnn_addmm_no_packing(s):
    """The original addmm's files, run with net.opt.use_packing_layout = False: keyed by the ncnn release."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("addmm"))
    return s.ncnn.run(param, bin, "addmm", ["in0"], ["out0"], options=NO_PACKING)


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_addmm(s):
    """pnnx from the traced TorchScript (it writes the addmm as an InnerProduct), then the ncnn runtime."""
    return s.pnnx.to_ncnn("addmm", source="torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_classifier_head(s):
    """pnnx from the traced TorchScript of the classifier, then the ncnn runtime."""
    return s.pnnx.to_ncnn("classifier-head", source="torchscript")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
