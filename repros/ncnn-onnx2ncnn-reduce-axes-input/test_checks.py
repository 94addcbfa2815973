from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["one-blob-only"]
VARIANTS = ["mean-keepdim", "mean-no-keepdim", "mean-channel", "mean-dynamo", "mean-onnxsim", "sum-opset18", "sum-opset17",
            "max-opset18", "max-keepdim-dynamo", "min-opset18", "l2-channel-opset18", "se-opset18", "pool-head-dynamo", "mean-opset17", "mean-keepdim-opset13",
            "max-opset17", "se-opset17", "pool-head-adaptive-opset18"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_se_block_dynamo(s):
    """A squeeze-excite block as torch 2.13 exports it by default (dynamo, opset 18), onnx2ncnn, then ncnn."""
    return s.onnx2ncnn.run("se-block-dynamo")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_mean_spatial_opset18(s):
    """x.mean((2, 3)), the global average pool, exported at opset 18 by the TorchScript exporter."""
    return s.onnx2ncnn.run("mean-spatial-opset18")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_sum_opset13(s):
    """x.sum((2, 3)) at opset 13: ReduceSum has taken its axes as an input since opset 13."""
    return s.onnx2ncnn.run("sum-opset13")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_pool_head_opset18(s):
    """nn.AdaptiveAvgPool2d(1) at opset 18 from the TorchScript exporter: a GlobalAveragePool, no Reduce op."""
    return s.onnx2ncnn.run("pool-head-opset18")


@checks.workaround("onnx2ncnn", "opset17", needs=["ncnn"])
def onnx2ncnn_se_block_opset17(s):
    """The same squeeze-excite block exported with dynamo=False at opset 17; judged against se-block-dynamo."""
    return s.onnx2ncnn.run("se-block-opset17")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_se_block(s):
    """pnnx from the traced TorchScript of the same block, run by ncnn as pnnx's own script feeds it."""
    return s.pnnx.to_ncnn("se-block-dynamo", source="torchscript")


@checks.variants("onnx2ncnn", BUG, VARIANTS, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
