from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["weight-inf"]
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


@checks.variants("pnnx", SIGS, needs=["ncnn"], **FP16_ROUNDING)
def defaults(s, case):
    """pnnx (from TorchScript, or from ONNX for the -opset/-dynamo/-onnxsim names) and ncnn, all defaults."""
    return via_pnnx(s, case, "onnx" if case.endswith(FROM_ONNX) else "torchscript")
