from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["load-param-failed"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_ext_block(s):
    """A conv block exported with torch.onnx.export(dynamo=True) defaults (weights in .onnx.data): onnx2ncnn, ncnn."""
    return s.onnx2ncnn.run("ext-block")


@checks.workaround("onnx2ncnn", "export-inline", needs=["ncnn"])
def onnx2ncnn_export_inline(s):
    """The same block exported with external_data=False."""
    return s.onnx2ncnn.run("ext-block-inline")


@checks.workaround("onnx2ncnn", "onnxsim", needs=["ncnn"])
def onnx2ncnn_onnxsim(s):
    """The same export, simplified with onnx-simplifier (which loads the external data and saves inline)."""
    return s.onnx2ncnn.run("ext-block-onnxsim")


@checks.workaround("onnx2ncnn", "resave-inline", needs=["ncnn"])
def onnx2ncnn_resave_inline(s):
    """The ext-block export itself, loaded with its .onnx.data and saved again with every tensor inline."""
    import onnx

    inline = s.path("ext-block-inline-resaved.onnx")
    onnx.save(onnx.load(str(s.artifacts.onnx("ext-block"))), str(inline), save_as_external_data=False)
    return s.onnx2ncnn.run("ext-block", model=inline)


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
