from convkb.checks import Checks

checks = Checks(__file__)
LOAD = ["load-param-failed"]
ABORT = ["protobuf-index-abort"]
THREE_INPUTS = {"weight-as-input": ("in0", "in1", "in2")}
# ncnn's x86 InnerProduct keeps its weights as fp16 where the CPU has F16C, and pnnx stores fp16 weights by default:
# a correct Linear differs from torch by up to a few 1e-4 here; the bug is a refused layer or an abort, not a figure.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.bug("onnx2ncnn", LOAD, needs=["ncnn"], **TOL)
def onnx2ncnn_weight_norm_linear(s):
    """A weight-normed nn.Linear exported with do_constant_folding=False: the Gemm's B is a Mul's output."""
    return s.onnx2ncnn.run("weight-norm-linear")


@checks.bug("onnx2ncnn", ABORT, needs=["ncnn"], **TOL)
def onnx2ncnn_linear_no_bias_dynamo(s):
    """nn.Linear(bias=False) exported with dynamo=True: a Gemm with two inputs (no C)."""
    return s.onnx2ncnn.run("linear-no-bias-dynamo")


@checks.control("onnx2ncnn", needs=["ncnn"], **TOL)
def onnx2ncnn_plain_linear_nofold(s):
    """A plain nn.Linear exported the same way (no constant folding): B and C are initializers."""
    return s.onnx2ncnn.run("plain-linear-nofold")


@checks.control("onnx2ncnn", needs=["ncnn"], **TOL)
def onnx2ncnn_linear_bias_dynamo(s):
    """nn.Linear with its bias, exported with dynamo=True: a Gemm with three inputs."""
    return s.onnx2ncnn.run("linear-bias-dynamo")


@checks.workaround("onnx2ncnn", "constant-folding", needs=["ncnn"], **TOL)
def onnx2ncnn_weight_norm_folded(s):
    """The weight-normed layer exported with torch.onnx.export's default do_constant_folding=True."""
    return s.onnx2ncnn.run("weight-norm-folded")


@checks.workaround("onnx2ncnn", "remove-weight-norm", needs=["ncnn"], **TOL)
def onnx2ncnn_weight_norm_removed(s):
    """parametrize.remove_parametrizations before export, still without constant folding."""
    return s.onnx2ncnn.run("weight-norm-removed")


@checks.workaround("onnx2ncnn", "onnxsim", needs=["ncnn"], **TOL)
def onnx2ncnn_weight_norm_onnxsim(s):
    """The unfolded export run through onnx-simplifier before onnx2ncnn."""
    return s.onnx2ncnn.run("weight-norm-onnxsim")


@checks.workaround("onnx2ncnn", "dynamo-false", needs=["ncnn"], **TOL)
def onnx2ncnn_no_bias_torchscript_exporter(s):
    """The bias-free layer exported with dynamo=False: a MatMul with a transposed initializer (an InnerProduct)."""
    return s.onnx2ncnn.run("no-bias-torchscript-exporter")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_onnx_weight_norm_linear(s):
    """pnnx from the same unfolded ONNX file, then the ncnn runtime."""
    return s.pnnx.to_ncnn("weight-norm-linear", source="onnx")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_onnx_linear_no_bias_dynamo(s):
    """pnnx from the same dynamo ONNX file (Gemm without C), then the ncnn runtime."""
    return s.pnnx.to_ncnn("linear-no-bias-dynamo", source="onnx")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_weight_norm_linear(s):
    """pnnx from the traced TorchScript of the weight-normed layer, then the ncnn runtime."""
    return s.pnnx.to_ncnn("weight-norm-linear", source="torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_torchscript_linear_no_bias(s):
    """pnnx from the traced TorchScript of the bias-free layer, then the ncnn runtime."""
    return s.pnnx.to_ncnn("linear-no-bias-dynamo", source="torchscript")


@checks.variants("onnx2ncnn", LOAD + ABORT, needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case, inputs=THREE_INPUTS.get(case, ("in0",)))
