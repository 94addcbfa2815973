from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["gather-not-supported", "gather-not-registered"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_index_select(s):
    """torch.index_select on the channels with a constant 3-element index, through onnx2ncnn and ncnn."""
    return s.onnx2ncnn.run("index-select")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_pruned_block(s):
    """The same selection between two convolutions, as in a channel-pruned model."""
    return s.onnx2ncnn.run("pruned-block")


@checks.bug("ncnn", ["gather-not-registered"], needs=["onnx2ncnn"])
def ncnn_loads_gather(s):
    """The runtime half, keyed by the ncnn release: the .param onnx2ncnn a4d2ea1 writes for index-select
    (a layer of type Gather), loaded by this ncnn."""
    return s.onnx2ncnn.run("index-select")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_slice(s):
    """A contiguous slice x[:, 2:4] (ONNX Slice, no Gather) on the same path."""
    return s.onnx2ncnn.run("slice")


@checks.workaround("onnx2ncnn", "slices", needs=["ncnn"])
def onnx2ncnn_slice_cat(s):
    """index-select rewritten as torch.cat([x[:, 0:1], x[:, 2:4]], 1)."""
    return s.onnx2ncnn.run("slice-cat")


@checks.workaround("onnx2ncnn", "slices", needs=["ncnn"])
def onnx2ncnn_pruned_block_slices(s):
    """pruned-block with the selection rewritten as slices and a concat, same weights."""
    return s.onnx2ncnn.run("pruned-block-slices")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_index_select(s):
    return s.pnnx.to_ncnn("index-select", source="torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_onnx_index_select(s):
    return s.pnnx.to_ncnn("index-select", source="onnx")


# pnnx stores conv weights as fp16 by default (the pruned block has two convolutions).
@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=1e-3, rtol=1e-3)
def pnnx_torchscript_pruned_block(s):
    return s.pnnx.to_ncnn("pruned-block", source="torchscript")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
