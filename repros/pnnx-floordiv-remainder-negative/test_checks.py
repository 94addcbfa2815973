import re

from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["wrong-values", "cast-not-registered"]
VARIANTS = ["floor-tensor", "floor-by-const", "floor-after-ops", "trunc-tensor", "trunc-by-const", "remainder-tensor",
            "remainder-by-const", "remainder-after-ops", "plain-div", "div-of-floor", "floor-of-half"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    # With a constant divisor the second input is unused: older pnnx releases drop it from the .param.
    blobs = [b for b in ("in0", "in1") if re.search(rf"\b{b}\b", param.read_text())]
    return s.ncnn.run(param, bin, case, blobs, ["out0"], batch=True)


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_div_floor(s):
    """torch.div(a, b, rounding_mode='floor') traced, converted by pnnx, run by ncnn."""
    return via_pnnx(s, s.artifacts.torchscript("div-floor"), "div-floor")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_div_trunc(s):
    """torch.div(a, b, rounding_mode='trunc')."""
    return via_pnnx(s, s.artifacts.torchscript("div-trunc"), "div-trunc")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def torchscript_remainder(s):
    """a % b with operands of either sign."""
    return via_pnnx(s, s.artifacts.torchscript("remainder"), "remainder")


@checks.workaround("pnnx", "python-floordiv", needs=["ncnn"])
def torchscript_floordiv_operator(s):
    """a // b instead of torch.div(a, b, rounding_mode='floor')."""
    return via_pnnx(s, s.artifacts.torchscript("floordiv-operator"), "floordiv-operator")


@checks.workaround("pnnx", "write-it-out", needs=["ncnn"])
def torchscript_floor_of_div(s):
    """torch.floor(a / b) instead of torch.div(a, b, rounding_mode='floor')."""
    return via_pnnx(s, s.artifacts.torchscript("floor-of-div"), "floor-of-div")


@checks.workaround("pnnx", "write-it-out", needs=["ncnn"])
def torchscript_remainder_written_out(s):
    """a - torch.floor(a / b) * b instead of a % b."""
    return via_pnnx(s, s.artifacts.torchscript("remainder-written-out"), "remainder-written-out")


@checks.workaround("pnnx", "onnx-input", needs=["ncnn"])
def onnx_div_floor(s):
    """pnnx from the ONNX export (dynamo=False, opset 13): Div -> Floor."""
    return via_pnnx(s, s.artifacts.onnx("div-floor"), "div-floor")


@checks.workaround("pnnx", "onnx-input", needs=["ncnn"])
def onnx_remainder(s):
    """pnnx from the ONNX export: Div -> Floor -> Mul -> Sub."""
    return via_pnnx(s, s.artifacts.onnx("remainder"), "remainder")


@checks.workaround("pnnx", "onnx-input", needs=["ncnn"])
def onnx_div_trunc(s):
    """Caveat: the ONNX export writes trunc as Div -> Cast(int64) -> Cast(float), which pnnx leaves as Tensor.to."""
    return via_pnnx(s, s.artifacts.onnx("div-trunc"), "div-trunc")


@checks.variants("pnnx", SIGS, VARIANTS, needs=["ncnn"])
def torchscript(s, case):
    """Traced, converted by pnnx, run by ncnn; compared with torch."""
    return via_pnnx(s, s.artifacts.torchscript(case), case)
