from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape", "extract-failed", "wrong-output"]
IN2, IN3 = ("in0", "in1"), ("in0", "in1", "in2")
INPUTS = {"attention-block": ("in0",), "linear-3d-near-miss": ("in0",), "core-opset17": IN3}


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_scores(s):
    """q @ k.transpose(-2, -1) on (1, heads, tokens, dim) inputs: onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("scores", inputs=IN2)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_attention_core(s):
    """softmax(q @ k^T * scale, dim=3) @ v on (1, heads, tokens, dim) inputs."""
    return s.onnx2ncnn.run("attention-core", inputs=IN3)


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_gemm_on_3d_blobs(s):
    """The runtime half, keyed by the ncnn release: the Permute + weightless Gemm that onnx2ncnn a4d2ea1 writes
    for the scores, run by this ncnn."""
    return s.onnx2ncnn.run("scores", inputs=IN2)


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_scores_3d(s):
    """The same scores on 3-D (1, tokens, dim) tensors: the same Gemm path, without the heads axis."""
    return s.onnx2ncnn.run("scores-3d", inputs=IN2)


@checks.workaround("onnx2ncnn", "per-head", needs=["ncnn"])
def onnx2ncnn_per_head(s):
    """The attention core one head at a time, as 3-D products, concatenated over the heads axis."""
    return s.onnx2ncnn.run("per-head", inputs=IN3)


# pnnx stores weights as fp16 by default; these models have no weights, so the default tolerance holds.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_attention_core(s):
    """pnnx from the traced TorchScript (it writes ncnn's MatMul layer), then the ncnn runtime."""
    return s.pnnx.to_ncnn("attention-core", source="torchscript", inputs=IN3)


# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: the Linear near miss is 5.7e-4 off
# torch, a correct result; the bug changes the output's shape.
@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], atol=1e-3, rtol=1e-3)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case, inputs=INPUTS.get(case, IN2))
