import re

from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("onnx2ncnn", "edit-param", needs=["ncnn"])
def padding_one_input(s):
    """onnx2ncnn on pad-value, then its Padding line edited: the constant_value blob dropped, 5= set to the value (0.5)."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("pad-value"))
    lines = []
    for line in param.read_text().splitlines(keepends=True):
        if line.startswith("Padding"):
            f = line.split()
            line = " ".join(f[:2] + ["1", "1", f[4], f[6]] + [re.sub(r"^5=.*", "5=5.000000e-01", t) for t in f[7:]]) + "\n"
        lines.append(line)
    edited = s.path("pad-value.edited.param")
    edited.write_text("".join(lines))
    return s.ncnn.run(edited, bin, "pad-value", ["in0"], ["out0"])
