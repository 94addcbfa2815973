from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("onnx2ncnn", "resave-inline", needs=["ncnn"])
def onnx2ncnn_resave_inline(s):
    """The ext-block export itself, loaded with its .onnx.data and saved again with every tensor inline."""
    import onnx

    inline = s.path("ext-block-inline-resaved.onnx")
    onnx.save(onnx.load(str(s.artifacts.onnx("ext-block"))), str(inline), save_as_external_data=False)
    return s.onnx2ncnn.run("ext-block", model=inline)
