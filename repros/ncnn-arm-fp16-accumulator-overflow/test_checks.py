from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("ncnn", "layer-fp32", needs=["onnx2ncnn"], atol=0.05, rtol=0.01)
def feat_mask_a76(s):
    """The convolution's .param (onnx2ncnn, opset 11) with 31=1 (the layer feature mask's "no fp16 arithmetic" bit)
    appended to its Convolution line, run on an emulated Cortex-A76 with ncnn's defaults for every other layer."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("conv1x1"))
    lines = [ln + " 31=1" if ln.split()[:1] == ["Convolution"] else ln for ln in param.read_text().splitlines()]
    assert any(ln.endswith(" 31=1") for ln in lines), "no Convolution line in the .param"
    masked = s.ncnn.write_param("conv1x1-31=1.param", "\n".join(lines))
    return s.ncnn.run(masked, bin, "conv1x1", ["in0"], ["out0"], cpu="cortex-a76")
