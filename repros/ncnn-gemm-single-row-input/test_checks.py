from convkb.checks import Checks

checks = Checks(__file__)
NO_PACKING = {"use_packing_layout": False}


@checks.workaround("ncnn", "no-packing-layout", needs=["onnx2ncnn"])
def ncnn_addmm_no_packing(s):
    """The original addmm's files, run with net.opt.use_packing_layout = False: keyed by the ncnn release."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("addmm"))
    return s.ncnn.run(param, bin, "addmm", ["in0"], ["out0"], options=NO_PACKING)
