from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["quantize-not-supported", "qlinear-not-supported", "converter-abort", "quant-layer-not-registered"]
# The quantized model is compared with torch's float outputs: int8 rounding is allowed 10% of the range.
QTOL = dict(range_tol=0.1)


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"], **QTOL)
def onnx2ncnn_qdq(s):
    """The reported path: an onnxruntime static QDQ model through onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, "qdq")


@checks.bug("ncnn", ["quant-layer-not-registered"], needs=["onnx2ncnn"], **QTOL)
def ncnn_loads_qdq_layers(s):
    """The runtime half: the .param onnx2ncnn writes for a QDQ MLP (it passes QuantizeLinear / DequantizeLinear
    through under their ONNX names), loaded by the ncnn release under test."""
    return via_onnx2ncnn(s, "mlp-qdq")


@checks.bug("pnnx", BUG + ["expression-not-registered"], needs=["ncnn"], **QTOL)
def pnnx_onnx_qdq(s):
    """pnnx from the same QDQ ONNX file."""
    return via_pnnx(s, s.artifacts.onnx("qdq"), "qdq")


@checks.bug("pnnx", ["pnnx-quantized-op"], needs=["ncnn"], **QTOL)
def pnnx_onnx_qoperator(s):
    """pnnx from the QOperator file (pnnx/pnnx#169): its ONNX reader has no rule for onnxruntime's quantized ops."""
    return via_pnnx(s, s.artifacts.onnx("qoperator-cnn"), "qoperator-cnn")


@checks.workaround("onnx2ncnn", "convert-float-model", needs=["ncnn"])
def onnx2ncnn_float(s):
    """The float model the quantized one was made from converts and matches the original's torch output."""
    return via_onnx2ncnn(s, "float")


@checks.workaround("pnnx", "convert-float-model", needs=["ncnn"])
def pnnx_torchscript_float(s):
    """The same float model, traced to TorchScript, through pnnx."""
    return via_pnnx(s, s.artifacts.torchscript("float"), "float")


@checks.variants("onnx2ncnn", BUG, ["qdq-opset13", "qdq-opset17", "qdq-dynamo", "qdq-onnxsim", "qdq-per-channel",
                                    "qdq-mlp", "qoperator", "dynamic-mlp", "float-near-miss", "float-mlp-near-miss"],
                 needs=["ncnn"], **QTOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
