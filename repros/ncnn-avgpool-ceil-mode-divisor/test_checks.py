from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-border"]
# pnnx stores the block variant's conv weights as fp16 (a few 1e-4 off); the bug is off by 0.5 or more.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def ncnn_pnnx_avgpool_ceil(s):
    """AvgPool2d(3, 2, padding=1, ceil_mode=True) on an 8x8 map, converted by pnnx from TorchScript."""
    return s.pnnx.to_ncnn("avgpool-ceil")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"], **TOL)
def ncnn_onnx2ncnn_avgpool_ceil(s):
    """The same through onnx2ncnn a4d2ea1 (ONNX AveragePool ceil_mode=1 count_include_pad=1)."""
    return s.onnx2ncnn.run("avgpool-ceil")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def pnnx_avgpool_ceil(s):
    """Keyed by the pnnx release: what each pnnx writes for avgpool-ceil, run by the installed ncnn."""
    return s.pnnx.to_ncnn("avgpool-ceil")


@checks.control("ncnn", needs=["pnnx"], **TOL)
def ncnn_pnnx_avgpool_floor(s):
    """The same pool without ceil_mode: its border windows (pad counted) match torch."""
    return s.pnnx.to_ncnn("avgpool-floor")


@checks.control("ncnn", needs=["pnnx"], **TOL)
def ncnn_pnnx_avgpool_ceil_exclude_pad(s):
    """ceil_mode=True with count_include_pad=False: ncnn leaves out the extension and the padding, as torch does."""
    return s.pnnx.to_ncnn("avgpool-ceil-exclude-pad")


@checks.workaround("ncnn", "pad-then-pool", needs=["pnnx"], **TOL)
def ncnn_pnnx_pad_then_pool(s):
    """F.pad, then avg_pool2d(padding=0, ceil_mode=True, count_include_pad=False), through pnnx."""
    return s.pnnx.to_ncnn("pad-then-pool")


@checks.variants("ncnn", BUG, needs=["pnnx", "onnx2ncnn"], **TOL)
def variant(s, case):
    """onnx2ncnn for the variants about the export (opset 17, dynamo, onnx-simplifier), pnnx from
    TorchScript for the others; then this ncnn."""
    if any(k in case for k in ("opset17", "dynamo", "onnxsim")):
        return s.onnx2ncnn.run(case)
    return s.pnnx.to_ncnn(case)
