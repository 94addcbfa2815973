from kb.checks import Checks

checks = Checks(__file__)
RESIZE = ["resize-sizes-empty", "shape-not-supported", "shape-not-registered"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C, and pnnx writes fp16 weights:
# measured up to 8.6e-4 abs (pnnx before 20261020; 3.2e-4 on 20261020), 5.8e-5 for onnx2ncnn.
TOL = dict(atol=1e-3, rtol=1e-3)


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.variants("onnx2ncnn", RESIZE, ["view-opset13", "view-opset17", "view-batch-channels", "view-dynamo",
                                       "resize-double", "resize-like-input", "resize-dynamo", "view-static-near-miss",
                                       "flatten-near-miss", "resize-scale-factor-near-miss",
                                       "resize-onnxsim-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
