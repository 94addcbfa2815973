import onnx
from onnx import numpy_helper

from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("onnx2ncnn", "add-kernel-shape", needs=["ncnn"])
def conv_kernel_shape_added(s):
    """The conv-old-torchlib file with kernel_shape set on each Conv from its weight's shape, then onnx2ncnn and ncnn."""
    model = onnx.load(str(s.artifacts.onnx("conv-old-torchlib")))
    weights = {t.name: numpy_helper.to_array(t).shape for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type in ("Conv", "ConvTranspose") and not any(a.name == "kernel_shape" for a in node.attribute):
            node.attribute.append(onnx.helper.make_attribute("kernel_shape", list(weights[node.input[1]][2:])))
    fixed = s.path("conv-kernel-shape.onnx")
    onnx.save(model, str(fixed))
    param, bin = s.onnx2ncnn.convert(fixed)
    return s.ncnn.run(param, bin, "conv-old-torchlib", ["in0"], ["out0"])
