from kb import child
from kb.checks import Checks

checks = Checks(__file__)


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


@checks.control("onnxruntime")
def onnxruntime_runs_fused(s):
    """onnxruntime runs the fused file (com.microsoft:Attention is its own contrib op) and matches torch:
    onnxsim's rewrite is correct, only the converters lack the op."""
    return s.onnxruntime.run(s.artifacts.onnx("attention"), "attention")


@checks.workaround("mnn", "skip-fuse-attention")
def mnn_skip_fuse_attention(s):
    """onnxsim with fuse_attention skipped on the plain export of the same model, then MNN."""
    return s.mnn.run(s.mnn.convert(without_fusion(s, "attention-plain")), "attention-plain")


# pnnx stores weights as fp16 by default (fp16=1): 1.0e-4 off torch on 20261020. Older releases return a
# (1, 32) output for (1, 8, 32), which no tolerance hides.


# The unfused BERT layer (v-no-onnxsim) runs MNN's own LayerNorm and erf: 1.3e-4 off torch on MNN 3.6.1, a
# correct result; the other variants either convert exactly (below 3e-7) or do not convert at all.
