"""KB234: pnnx with moduleop=kb_repro.ScaledLinear (and fp16= as each check says), then ncnn with the user's custom
layer for that module (user_program.py, in a child), which reads its weights from the .bin with a tag (as ncnn's own
layers do) or without one."""

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)

MODULEOP = "moduleop=kb_repro.ScaledLinear"


def converted(s, fp16: bool):
    return s.pnnx.convert(s.artifacts.torchscript("moduleop"), "moduleop", fp16=fp16, flags=[MODULEOP])


def run(s, param, bin, how: str, tag: str):
    out = s.path(f"moduleop-{tag}.npz")
    s.step(child.run_function(f"ncnn custom layer ({how} read)", "user_program:feed", cwd=s.entry.dir,
                              param=str(param), bin=str(bin), inputs=str(s.artifacts.inputs("moduleop")), out=str(out),
                              how=how), produces=[out])
    return Outputs.load("moduleop", out, f"ncnn {s.ncnn.version()} with the custom layer")


@checks.bug("pnnx", ["untagged-weights"], needs=["ncnn"], atol=0.003, rtol=0.002)
def tagged_read_fp16(s):
    """pnnx fp16=1 (the thread's option); the custom layer reads its weights with ModelBin::load(100, 0)."""
    param, bin = converted(s, True)
    return run(s, param, bin, "tagged", "fp16-tagged")


@checks.bug("pnnx", ["untagged-weights"], needs=["ncnn"], atol=0.003, rtol=0.002)
def tagged_read_fp32(s):
    """pnnx fp16=0: the same read, the same failure: the layer's weights carry no tag either way."""
    param, bin = converted(s, False)
    return run(s, param, bin, "tagged", "fp32-tagged")


@checks.workaround("pnnx", "read-raw", needs=["ncnn"], atol=0.003, rtol=0.002)
def raw_read_fp16(s):
    """pnnx fp16=1; the custom layer reads its weights with ModelBin::load(100, 1): bare fp32."""
    param, bin = converted(s, True)
    return run(s, param, bin, "raw", "fp16-raw")


@checks.workaround("pnnx", "fp16-post-pass", needs=["ncnn"], atol=0.003, rtol=0.002)
def post_pass_fp16(s):
    """pnnx fp16=1, then the layer's blob rewritten as a tagged fp16 blob (user_program.post_pass); the custom layer
    reads it with ModelBin::load(100, 0)."""
    param, bin = converted(s, True)
    smaller = s.path("moduleop-post-pass.ncnn.bin")
    s.step(child.run_function("post-pass", "user_program:post_pass", cwd=s.entry.dir, bin=str(bin), out=str(smaller)),
           produces=[smaller])
    return run(s, param, smaller, "tagged", "post-pass")
