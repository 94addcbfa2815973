from convkb.checks import Checks

checks = Checks(__file__)
# What ncnn does with the file first (the failure the user meets), then pnnx's own line, which names the
# cause, for a failure of any other kind.
BUG = ["reshape-not-registered", "load-param-failed", "ncnn-crash", "wrong-shape", "wrong-output",
       "rank-not-supported"]
# pnnx stores weights as fp16 by default (fp16=1): a correct conversion differs from torch by a few 1e-4.
TOL = dict(atol=2e-3, rtol=1e-3)
VARIANTS = ["partition-opset13", "partition-opset18", "partition-dynamo", "partition-onnxsim", "reverse-opset17",
            "reverse-dynamo", "patch-embed-partition", "swin-block", "swin-block-dynamo", "partition-4d-near-miss",
            "reverse-4d-dynamo-near-miss", "swin-block-4d-near-miss", "channel-shuffle-near-miss",
            "permute-5d-after-conv-near-miss"]


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_window_partition(s):
    """Swin's window_partition after a Linear: view to 6-D, permute(0, 1, 3, 2, 4, 5), reshape; from TorchScript."""
    return s.pnnx.to_ncnn("window-partition", source="torchscript")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_window_partition(s):
    """The same from the ONNX export: Reshape to 6-D, a 6-D Transpose, Reshape."""
    return s.pnnx.to_ncnn("window-partition", source="onnx")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_window_reverse(s):
    """window_partition, then window_reverse back to the map; from TorchScript."""
    return s.pnnx.to_ncnn("window-reverse", source="torchscript")


@checks.control("pnnx", needs=["ncnn"], **TOL)
def torchscript_channel_shuffle(s):
    """A 5-D view and transpose(1, 2) with the batch axis first (ShuffleNet), from TorchScript."""
    return s.pnnx.to_ncnn("channel-shuffle", source="torchscript")


@checks.workaround("pnnx", "four-d", needs=["ncnn"], **TOL)
def torchscript_window_partition_4d(s):
    """window_partition with 4-D reshapes and permutes, the batch folded into the first axis; judged against
    the 6-D original's torch output."""
    return s.pnnx.to_ncnn("window-partition-4d", source="torchscript")


@checks.workaround("pnnx", "four-d", needs=["ncnn"], **TOL)
def onnx_window_partition_4d(s):
    return s.pnnx.to_ncnn("window-partition-4d", source="onnx")


@checks.workaround("pnnx", "four-d", needs=["ncnn"], **TOL)
def torchscript_window_reverse_4d(s):
    return s.pnnx.to_ncnn("window-reverse-4d", source="torchscript")


@checks.variants("pnnx", BUG, VARIANTS, needs=["ncnn"], **TOL)
def variant(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return s.pnnx.to_ncnn(case, source="onnx")
