from kb.checks import Checks

checks = Checks(__file__)
BUG = ["unsupported-transpose", "wrong-shape", "wrong-output"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C, and pnnx writes fp16 weights:
# a correct attention block differs from torch by a few 1e-4, the bug by far more.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.variants("onnx2ncnn", BUG, ["attention-opset13", "attention-opset17", "attention-dynamo", "attention-onnxsim", "permute-5d-swap-inner", "permute-5d-accepted", "permute-4d-batch-moved", "permute-4d-nhwc-near-miss", "permute-4d-heads-near-miss", "split-qkv-near-miss", "channel-shuffle-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
