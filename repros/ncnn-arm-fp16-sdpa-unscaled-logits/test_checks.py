from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("ncnn", "layer-fp32", needs=["pnnx"], atol=0.01, rtol=0.01)
def feat_mask_vit_a76(s):
    """The ViT's .param (pnnx 20261020 from the ONNX export) with 31=1 (the layer feature mask's "no fp16
    arithmetic" bit) appended to its SDPA lines, run on an emulated Cortex-A76 with ncnn's defaults for every other
    layer."""
    param, bin = s.pnnx.convert(s.artifacts.onnx("vit"), "vit")
    lines = [ln + " 31=1" if ln.split()[:1] == ["SDPA"] else ln for ln in param.read_text().splitlines()]
    assert any(ln.endswith(" 31=1") for ln in lines), "no SDPA line in the .param"
    param.write_text("\n".join(lines) + "\n")  # in place: pnnx's *_ncnn.py beside it still says how to feed it
    return s.ncnn.run(param, bin, "vit", ["in0"], ["out0"], cpu="cortex-a76")
