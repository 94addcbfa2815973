from convkb import child
from convkb.checks import Checks

checks = Checks(__file__)
MNN_BUG = ["mnn-attention-not-supported"]
TWO_INPUTS = {"v-masked", "v-cross-attention", "masked-attention"}


def feeds(case):
    return ("in0", "in1") if case in TWO_INPUTS else ("in0",)


def without_fusion(s, case):
    """onnxsim on the case's plain export with its fuse_attention pass skipped, as
    `onnxsim in.onnx out.onnx --skip-optimization fuse_attention` does."""
    src = s.artifacts.onnx(case)
    dst = s.path(f"{src.stem}.nofuse.onnx")
    s.step(child.run_function("onnxsim --skip-optimization fuse_attention", "onnxsim:simplify", model=str(src),
                              output_path=str(dst), skipped_optimizers=["fuse_attention"],
                              shown=f"onnxsim {src.name} {dst.name} --skip-optimization fuse_attention"),
           produces=[dst])
    return dst


@checks.bug("mnn", MNN_BUG)
def mnn_onnxsim_attention(s):
    """The reported path: a self-attention exported at opset 13, run through onnxsim, then mnnconvert and
    MNN's module API."""
    return s.mnn.convert_run("attention")


@checks.bug("pnnx", ["pnnx-attention-not-registered"], needs=["ncnn"])
def pnnx_onnxsim_attention(s):
    """The same onnxsim output through pnnx (from ONNX), then ncnn."""
    return s.pnnx.to_ncnn("attention", source="onnx")


@checks.bug("onnx2ncnn", ["onnx2ncnn-attention-not-supported", "ncnn-attention-not-registered"], needs=["ncnn"])
def onnx2ncnn_onnxsim_attention(s):
    """The same onnxsim output through onnx2ncnn, then ncnn."""
    return s.onnx2ncnn.run("attention")


@checks.control("mnn")
def mnn_masked_attention(s):
    """An attention with an additive mask: onnxsim does not fuse it, and MNN converts and matches torch."""
    return s.mnn.convert_run("masked-attention")


@checks.control("onnxruntime")
def onnxruntime_runs_fused(s):
    """onnxruntime runs the fused file (com.microsoft:Attention is its own contrib op) and matches torch:
    onnxsim's rewrite is correct, only the converters lack the op."""
    return s.onnxruntime.run(s.artifacts.onnx("attention"), "attention")


@checks.workaround("mnn", "skip-fuse-attention")
def mnn_skip_fuse_attention(s):
    """onnxsim with fuse_attention skipped on the plain export of the same model, then MNN."""
    return s.mnn.run(s.mnn.convert(without_fusion(s, "attention-plain")), "attention-plain")


@checks.workaround("mnn", "no-onnxsim")
def mnn_no_onnxsim(s):
    """The plain export of the same model, without onnxsim, then MNN."""
    return s.mnn.convert_run("attention-plain")


# pnnx stores weights as fp16 by default (fp16=1): 1.0e-4 off torch on 20261020. Older releases return a
# (1, 32) output for (1, 8, 32), which no tolerance hides.
@checks.workaround("pnnx", "pnnx-torchscript", needs=["ncnn"], atol=5e-3, rtol=1e-2)
def pnnx_torchscript(s):
    """pnnx from the traced TorchScript of the same model (pnnx's own input), then ncnn."""
    return s.pnnx.to_ncnn("attention-plain", source="torchscript")


# The unfused BERT layer (v-no-onnxsim) runs MNN's own LayerNorm and erf: 1.3e-4 off torch on MNN 3.6.1, a
# correct result; the other variants either convert exactly (below 3e-7) or do not convert at all.
@checks.variants("mnn", MNN_BUG, atol=1e-3)
def mnn(s, case):
    """onnxsim's output (or the plain export for v-no-onnxsim), mnnconvert, MNN's module API."""
    return s.mnn.convert_run(case)
