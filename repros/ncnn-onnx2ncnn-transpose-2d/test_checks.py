from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape", "wrong-output"]
IN2 = ("in0", "in1")
TWO_INPUTS = {"t-matmul-opset13", "t-matmul-opset17", "t-matmul-dynamo", "t-matmul-onnxsim", "similarity"}


# pnnx stores weights as fp16 by default; this model has no weights, so the default tolerance holds.


# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: the models with a Linear can be
# ~1e-4 off torch when correct; the bug gives the wrong shape or is off by more than 0.1.
@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], atol=1e-3, rtol=1e-3)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case, inputs=IN2 if case in TWO_INPUTS else ("in0",))
