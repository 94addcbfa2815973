from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape", "nan-output", "wrong-output"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: a correct result differs from
# torch by up to 9.2e-4 (measured on the tokens near miss), the bug by orders of magnitude more.
TOL = dict(atol=1e-3, rtol=1e-3)


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


# pnnx stores the weights as fp16: measured up to 3.8e-4 abs over pnnx 20240226 to 20261020.


@checks.variants("onnx2ncnn", BUG, ["mlp-opset13", "mlp-opset17", "layer-scale", "single-linear-dynamo", "single-linear",
                                    "relu-before-linear", "layernorm-before-linear", "no-permute-back", "tokens-near-miss", "head-near-miss",
                                    "conv1x1-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
