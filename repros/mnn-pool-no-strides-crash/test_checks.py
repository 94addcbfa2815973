import onnx
from onnx import helper

from kb.checks import Checks

checks = Checks(__file__)

POOLS = ("AveragePool", "MaxPool")


def edited(s, case, strides):
    """The case's export with `strides` deleted from every pool (as a graph written without it has none), or,
    with strides=True, then written back explicitly as all ones (ONNX's default, stated)."""
    model = onnx.load(str(s.artifacts.onnx(case)))
    for node in model.graph.node:
        if node.op_type in POOLS:
            kept = [a for a in node.attribute if a.name != "strides"]
            rank = len(next(a.ints for a in node.attribute if a.name == "kernel_shape"))
            del node.attribute[:]
            node.attribute.extend(kept)
            if strides:
                node.attribute.append(helper.make_attribute("strides", [1] * rank))
    path = s.path(f"{case}.onnx")
    onnx.save(model, str(path))
    return s.mnn.run(s.mnn.convert(path), case)


@checks.bug("mnn", ["sigfpe"])
def avgpool_no_strides(s):
    """Conv -> ReLU -> AveragePool(kernel 3, pads 1) with `strides` deleted: mnnconvert, Module API."""
    return edited(s, "avgpool", strides=False)


@checks.bug("mnn", ["sigfpe"])
def maxpool_no_strides(s):
    """The same with a MaxPool."""
    return edited(s, "maxpool", strides=False)


@checks.bug("mnn", ["sigfpe"])
def avgpool1d_no_strides(s):
    """A 1-D AveragePool (kernel 3, pads 1) with `strides` deleted."""
    return edited(s, "avgpool1d", strides=False)


@checks.bug("mnn", ["sigsegv"])
def maxpool3d_no_strides(s):
    """A 3-D MaxPool (kernel 3, pads 1) with `strides` deleted."""
    return edited(s, "maxpool3d", strides=False)


@checks.workaround("mnn", "explicit-strides")
def avgpool_strides_added(s):
    """The edited AveragePool with strides=[1, 1] written back into the node."""
    return edited(s, "avgpool-explicit", strides=True)


@checks.workaround("mnn", "explicit-strides")
def maxpool3d_strides_added(s):
    """The edited 3-D MaxPool with strides=[1, 1, 1] written back."""
    return edited(s, "maxpool3d-explicit", strides=True)
