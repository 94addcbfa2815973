"""KB180: a grouped Conv1d through onnx2ncnn, then ncnn. The wrong values come from memory past the weight
blob, so they change from run to run and some runs hold NaN or inf: every check hands the harness ncnn's output
with a non-finite value written as float32's largest one, so that each run is judged alike (wrong beyond the
tolerance), never by the garbage it happened to read."""

import numpy as np

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)

BIG = float(np.finfo(np.float32).max)


def finite(out: Outputs) -> Outputs:
    """ncnn's outputs, non-finite values written as +-float32 max (as far from any right value as a float goes)."""
    arrays = {k: np.nan_to_num(v.astype(np.float32), nan=BIG, posinf=BIG, neginf=-BIG) for k, v in out.arrays.items()}
    return Outputs(out.case, arrays, out.source)


def onnx2ncnn(s, case: str, edit: bool = False) -> Outputs:
    """onnx2ncnn on the case's ONNX, the .param edited where `edit` (each Convolution1D that carries a group,
    7=<g> with g > 1, renamed ConvolutionDepthWise1D, the layer that reads the group), then ncnn."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    if edit:
        lines = []
        for line in param.read_text().splitlines(keepends=True):
            f = line.split()
            if f and f[0] == "Convolution1D" and any(t.startswith("7=") and int(t[2:]) > 1 for t in f):
                line = "ConvolutionDepthWise1D " + line[len("Convolution1D"):].lstrip()
            lines.append(line)
        param = s.path(f"{case}.edited.param")
        param.write_text("".join(lines))
    return finite(s.ncnn.run(param, bin, case, ["in0"], ["out0"]))


@checks.bug("ncnn", ["wrong-values"], needs=["onnx2ncnn"])
def onnx2ncnn_dw_conv1d(s):
    """The thread's depthwise Conv1d (80 channels, groups 80, kernel 11) on an all-ones input: onnx2ncnn, then ncnn."""
    return onnx2ncnn(s, "dw-conv1d")


@checks.bug("onnx2ncnn", ["wrong-values"], needs=["ncnn"])
def onnx2ncnn_dw_conv1d_converter(s):
    """The same, filed under the onnx2ncnn build (the converter writes the layer)."""
    return onnx2ncnn(s, "dw-conv1d")


@checks.control("ncnn", needs=["onnx2ncnn"])
def onnx2ncnn_conv1d_ungrouped(s):
    """Control: the same Conv1d with groups=1, which Convolution1D computes."""
    return onnx2ncnn(s, "conv1d-ungrouped")


@checks.workaround("ncnn", "edit-param", needs=["onnx2ncnn"])
def edited_param_dw_conv1d(s):
    """onnx2ncnn on dw-conv1d, its Convolution1D line renamed ConvolutionDepthWise1D (the rest kept), then ncnn."""
    return onnx2ncnn(s, "dw-conv1d", edit=True)


@checks.variants("ncnn", ["wrong-values"], needs=["onnx2ncnn"])
def variant(s, case):
    """onnx2ncnn, then ncnn."""
    return onnx2ncnn(s, case)
