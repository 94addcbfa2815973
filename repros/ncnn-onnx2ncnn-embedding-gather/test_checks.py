from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["gather-not-supported", "gather-not-registered"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: the Linear heads differ from torch
# by up to 6.9e-4 (measured on the one-hot near miss), so 1e-3 is the tolerance of every comparison here.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_embedding(s):
    """onnx2ncnn, then the ncnn runtime, on one nn.Embedding fed int64 token ids."""
    return s.onnx2ncnn.run("embedding")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_text_cnn(s):
    """A small text classifier: embedding, Conv1d, ReLU, mean over tokens, Linear."""
    return s.onnx2ncnn.run("text-cnn")


@checks.bug("ncnn", ["gather-not-registered", "gather-not-supported"], needs=["onnx2ncnn"])
def ncnn_loads_embedding(s):
    """The runtime half, keyed by the ncnn release: the .param onnx2ncnn a4d2ea1 writes for `embedding`
    (a Gather layer), loaded by this ncnn."""
    return s.onnx2ncnn.run("embedding")


@checks.control("onnx2ncnn", needs=["ncnn"], **TOL)
def onnx2ncnn_text_cnn_embedded_input(s):
    """The same classifier without its embedding, fed the embedded tokens: everything but the lookup converts."""
    return s.onnx2ncnn.run("text-cnn-embedded-input")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
