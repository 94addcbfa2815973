import shutil

import onnx

from kb.checks import Checks

checks = Checks(__file__)


def alone(s, model, case):
    """mnnconvert on the .onnx file copied to a folder of its own, as a user copies model.onnx alone."""
    folder = s.path("copied")
    folder.mkdir(exist_ok=True)
    return s.mnn.run(s.mnn.convert(shutil.copy(model, folder / f"{case}.onnx")), case)


@checks.bug("mnn", ["cannot-open-data", "fail-open-data"])
def conv_alone(s):
    """The dynamo export of a Conv/Linear net, model.onnx copied without model.onnx.data: mnnconvert, Module API."""
    return alone(s, s.artifacts.onnx("conv"), "conv")


@checks.bug("mnn", ["cannot-open-data", "fail-open-data"])
def gru_alone(s):
    """The same with a GRU (MNN rewrites it into a While loop) and a Linear."""
    return alone(s, s.artifacts.onnx("gru"), "gru")


@checks.workaround("mnn", "export-inline")
def conv_inline_alone(s):
    """The net exported with external_data=False, its .onnx copied alone."""
    return alone(s, s.artifacts.onnx("conv-inline"), "conv-inline")


@checks.workaround("mnn", "resave-inline")
def conv_resaved_alone(s):
    """The default export re-saved as one file (onnx.save(onnx.load(...), save_as_external_data=False)), copied alone."""
    resaved = s.path("conv.onnx")
    onnx.save(onnx.load(str(s.artifacts.onnx("conv"))), str(resaved), save_as_external_data=False)
    return alone(s, resaved, "conv")
