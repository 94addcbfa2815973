from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["unsupported-transpose", "wrong-shape", "wrong-output"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C, and pnnx writes fp16 weights:
# a correct attention block differs from torch by a few 1e-4, the bug by far more.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"], **TOL)
def onnx2ncnn_attention(s):
    """onnx2ncnn, then the ncnn runtime, on ViT attention: reshape to 5-D, permute(2, 0, 3, 1, 4)."""
    return s.onnx2ncnn.run("attention")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_permute_5d(s):
    """The smallest case: one permute(2, 0, 3, 1, 4)."""
    return s.onnx2ncnn.run("permute-5d")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_permute_4d_heads(s):
    """A 4-D permute(0, 2, 1, 3), batch axis first: onnx2ncnn maps it to an ncnn Permute."""
    return s.onnx2ncnn.run("permute-4d-heads")


@checks.workaround("onnx2ncnn", "split-qkv", needs=["ncnn"], **TOL)
def onnx2ncnn_attention_split_qkv(s):
    """The same attention with separate q, k, v Linear layers (4-D permutes only), through onnx2ncnn."""
    return s.onnx2ncnn.run("attention-split-qkv")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], **TOL)
def pnnx_onnx_attention(s):
    """pnnx from the ONNX file, on the original attention block."""
    return s.pnnx.to_ncnn("attention", source="onnx")


@checks.variants("onnx2ncnn", BUG, ["attention-opset13", "attention-opset17", "attention-dynamo", "attention-onnxsim", "permute-5d-swap-inner", "permute-5d-accepted", "permute-4d-batch-moved", "permute-4d-nhwc-near-miss", "permute-4d-heads-near-miss", "split-qkv-near-miss", "channel-shuffle-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
