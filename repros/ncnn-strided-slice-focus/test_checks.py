from kb.checks import Checks

checks = Checks(__file__)
# The measurement first: a wrong output shape (the step dropped), or a .param ncnn cannot load; the
# converter's "Unsupported slice step !" counts only beside such a failure.
BUG = ["wrong-shape", "slice-not-registered", "slice-step-unsupported", "wrong-output"]

def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


# pnnx stores conv weights as fp16 by default (fp16=1): measured max abs diff 7.2e-4 (20261020), 1.0e-3 (older).


@checks.variants("onnx2ncnn", BUG, ["focus-opset13", "focus-opset17", "focus-dynamo", "focus-onnxsim", "focus-relu",
                                    "subsample", "subsample-w", "crop-near-miss", "unshuffle-near-miss"],
                 needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
