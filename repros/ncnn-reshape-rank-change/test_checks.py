from convkb.checks import Checks

checks = Checks(__file__)
# 3-D -> 4-D: an output of another shape (the depth axis lost); 4-D -> 3-D: an empty blob, which ncnn's Python
# binding cannot turn into an array (the run aborts); after both, in a round trip: wrong values.
BUG = ["depth-lost", "empty-blob", "wrong-values"]
# pnnx stores the conv weights as fp16 by default: a correct conversion is up to ~9e-4 off torch here. The bug's
# outputs have another shape, abort, or are off by more than 1.
TOL = dict(atol=2e-3, rtol=1e-3)
VARIANTS = ["roundtrip-opset13", "roundtrip-opset17", "roundtrip-dynamo", "roundtrip-onnxsim", "merge-depth-opset18",
            "flatten-depth-height", "split-depth-dynamo", "temporal-softmax-block", "merge-into-channels-near-miss",
            "split-channels-near-miss", "same-rank-near-miss", "flatten-to-2d-near-miss", "keep-4d-near-miss"]


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx_normalize_roundtrip(s):
    """Tencent/ncnn#4389's graph: Conv3d, reshape (1, 24, 3, 5, 4) -> (1, 8, 9, 20), F.normalize over the
    channels, reshape -> (1, 8, 9, 1, 20); pnnx from TorchScript, then this ncnn."""
    return s.pnnx.to_ncnn("normalize-roundtrip", source="torchscript")


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx_split_depth(s):
    """Conv2d, then (1, 8, 4, 5) -> (1, 8, 2, 2, 5): a 3-D blob to 4-D, the same channels."""
    return s.pnnx.to_ncnn("split-depth", source="torchscript")


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx_merge_depth(s):
    """Conv3d, then (1, 24, 3, 5, 4) -> (1, 24, 3, 20): a 4-D blob to 3-D, the same channels."""
    return s.pnnx.to_ncnn("merge-depth", source="torchscript")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def onnx2ncnn_merge_depth(s):
    """The 5-D model input, ReLU, reshape to (1, 24, 3, 20): onnx2ncnn writes 'Reshape 0=20 1=3 2=24', run by
    this ncnn."""
    return s.onnx2ncnn.run("onnx2ncnn-merge-depth")


@checks.control("ncnn", needs=["pnnx"], **TOL)
def pnnx_merge_depth_into_channels(s):
    """Conv3d, then (1, 24, 3, 5, 4) -> (1, 72, 5, 4): 4-D to 3-D, but the channel count changes."""
    return s.pnnx.to_ncnn("merge-depth-into-channels", source="torchscript")


@checks.control("pnnx", needs=["ncnn"], **TOL)
def pnnx_release_normalize_roundtrip(s):
    """Keyed by the pnnx release: what each pnnx writes for #4389's graph, run by the installed ncnn."""
    return s.pnnx.to_ncnn("normalize-roundtrip", source="torchscript")


@checks.workaround("ncnn", "keep-4d", needs=["pnnx"], **TOL)
def pnnx_roundtrip_keep_4d(s):
    """reshape(1, 8, 1, 9, 20) instead of (1, 8, 9, 20): both Reshapes keep a 4-D blob; judged against the
    original's torch output."""
    return s.pnnx.to_ncnn("roundtrip-keep-4d", source="torchscript")


@checks.workaround("ncnn", "via-2d", needs=["pnnx"], **TOL)
def pnnx_merge_depth_via_flat(s):
    """(1, 24, 3, 5, 4) -> (1, 72, 20) -> (1, 24, 3, 20): through a 2-D blob."""
    return s.pnnx.to_ncnn("merge-depth-via-flat", source="torchscript")


@checks.workaround("ncnn", "via-2d", needs=["pnnx"], **TOL)
def pnnx_split_depth_via_flat(s):
    """(1, 8, 4, 5) -> (1, 32, 5) -> (1, 8, 2, 2, 5): through a 2-D blob."""
    return s.pnnx.to_ncnn("split-depth-via-flat", source="torchscript")


@checks.workaround("ncnn", "via-2d", needs=["onnx2ncnn"])
def onnx2ncnn_merge_depth_via_flat(s):
    return s.onnx2ncnn.run("onnx2ncnn-merge-depth-via-flat")


@checks.variants("ncnn", BUG, VARIANTS, needs=["pnnx"], **TOL)
def variant(s, case):
    """pnnx from the ONNX export, then this ncnn."""
    return s.pnnx.to_ncnn(case, source="onnx")
