from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["weight-inf"]
FP16_OFF = {"use_fp16_storage": False, "use_fp16_packed": False, "use_fp16_arithmetic": False}
FROM_ONNX = ("-opset13", "-opset17", "-dynamo", "-onnxsim")  # variants converted from their ONNX export
# Wherever weights are stored as fp16 (pnnx's default .bin; ncnn's x86 InnerProduct with use_fp16_storage), every
# weight is rounded to 11 significant bits: the Linear with all weights in range is then off by up to 4.45e-4
# (pnnx 20240410 to 20260526, or fp16=0 with ncnn defaults). These tolerances pass that rounding, which is not
# this entry's bug, and fail a weight clamped from 1e5 to 65504 (an error of a third of the output).
FP16_ROUNDING = {"atol": 2e-3, "rtol": 1e-2}


def via_pnnx(s, case, source="torchscript", fp16=None, options=None):
    model = s.artifacts.torchscript(case) if source == "torchscript" else s.artifacts.onnx(case)
    param, bin = s.pnnx.convert(model, case, fp16=fp16)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], options=options)


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16_ROUNDING)
def pnnx_defaults(s):
    """Linear(16, 16) with one weight of 1e5, traced; pnnx and ncnn with their defaults (pnnx fp16=1)."""
    return via_pnnx(s, "linear-big")


@checks.bug("ncnn", ["weight-clamped"], needs=["pnnx"], **FP16_ROUNDING)
def runtime_fp16_storage(s):
    """The same Linear, pnnx fp16=0 (an fp32 .bin); ncnn with its default options (use_fp16_storage on)."""
    return via_pnnx(s, "linear-big", fp16=False)


@checks.workaround("pnnx", "fp16-off", needs=["ncnn"])
def fp16_off(s):
    """pnnx fp16=0, and ncnn's use_fp16_storage / packed / arithmetic off before load_param."""
    return via_pnnx(s, "linear-big", fp16=False, options=FP16_OFF)


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def fp16_off_runtime(s):
    """The fp16-off workaround, measured over ncnn's releases."""
    return via_pnnx(s, "linear-big", fp16=False, options=FP16_OFF)


@checks.workaround("pnnx", "rescale", needs=["ncnn"], **FP16_ROUNDING)
def rescale(s):
    """The weight and bias divided by 4 and the output multiplied by 4; pnnx and ncnn defaults."""
    return via_pnnx(s, "linear-rescaled")


@checks.control("pnnx", needs=["ncnn"], **FP16_ROUNDING)
def in_range(s):
    """The same Linear with every weight in fp16's range; pnnx and ncnn defaults."""
    return via_pnnx(s, "linear-in-range")


@checks.control("ncnn", needs=["pnnx"], **FP16_ROUNDING)
def in_range_runtime(s):
    """The in-range Linear, pnnx fp16=0, ncnn defaults: fp16 storage's rounding alone, within FP16_ROUNDING."""
    return via_pnnx(s, "linear-in-range", fp16=False)


@checks.variants("pnnx", SIGS, needs=["ncnn"], **FP16_ROUNDING)
def defaults(s, case):
    """pnnx (from TorchScript, or from ONNX for the -opset/-dynamo/-onnxsim names) and ncnn, all defaults."""
    return via_pnnx(s, case, "onnx" if case.endswith(FROM_ONNX) else "torchscript")
