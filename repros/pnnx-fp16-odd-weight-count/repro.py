"""KB113 (regression guard, pnnx/pnnx#52): a weight of an odd number of elements, stored by pnnx as fp16 (its
default), takes 2 bytes short of the 4-byte boundary ncnn's ModelBin reads up to. The pnnx of September 2022 wrote
no padding, so every blob after it was read 2 bytes off: nn.Sequential(nn.Conv2d(1, 1, 3), nn.Conv2d(1, 2, 3))
(9 weights, then 18) failed to load with "ModelBin read quantization_value failed 42". Every pnnx release on PyPI
pads such a blob; these models measure that it stays so."""

from torch import nn

from kb.blocks import ONE_FILE, Fn, randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False)


def thread_model():
    """pnnx/pnnx#52's model: Conv2d(1, 1, 3) has 9 weights (odd), Conv2d(1, 2, 3) 18."""
    return nn.Sequential(nn.Conv2d(1, 1, (3, 3), (1, 1)), nn.Conv2d(1, 2, (3, 3), (1, 1)))


def two_convs(c0, c1, c2, k=3, bias=True, groups=1):
    """Conv2d(c0, c1, k) then Conv2d(c1, c2, 3): the first weight has c1 * c0 / groups * k * k elements."""
    return nn.Sequential(nn.Conv2d(c0, c1, k, bias=bias, groups=groups), nn.Conv2d(c1, c2, 3))


def cases():
    x = randn(1, 1, 5, 513)  # the thread's input shape
    yield Case("thread-model", seeded(thread_model), (x,), torchscript=True, **IO)
    # Control: the same layers with an even first weight count (18, then 36).
    yield Case("even-count", seeded(two_convs, 1, 2, 2), (x,), trigger=False, torchscript=True, **IO)


def variant(name, make, x, *args, torchscript=True, **kw):
    return Case(name, seeded(make, *args), (x,), torchscript=torchscript, **{**IO, **kw})


def variants():
    x1, x3 = randn(1, 1, 12, 16), randn(1, 3, 12, 16)
    # From TorchScript (pnnx's own path), each with a first weight of an odd element count.
    yield variant("thread-model-small-input", thread_model, x1)
    yield variant("single-conv-odd", lambda: nn.Conv2d(1, 1, 3), x1)  # the odd blob last in the .bin
    yield variant("three-in-channels", two_convs, x3, 3, 1, 2)  # 27 weights: not about in_channels == 1
    yield variant("kernel-5", two_convs, x1, 1, 1, 2, 5)  # 25 weights
    yield variant("kernel-1-three-out", two_convs, x3, 3, 3, 2, 1)  # 9 weights, 1x1 kernel
    yield variant("no-bias", two_convs, x1, 1, 1, 2, 3, False)  # the odd blob followed by the next tag
    yield variant("depthwise-3", two_convs, x3, 3, 3, 2, 3, True, 3)  # ConvolutionDepthWise, 27 weights
    yield variant("conv1d", lambda: nn.Sequential(nn.Conv1d(1, 1, 3), nn.Conv1d(1, 2, 3)), randn(1, 1, 20))
    yield variant("deconv", lambda: nn.Sequential(nn.ConvTranspose2d(1, 1, 3), nn.Conv2d(1, 2, 3)), x1)
    yield variant("linear-3x3", lambda: nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2)),
                  randn(1, 3))  # InnerProduct, 9 weights
    yield variant("conv-then-mul", lambda: nn.Sequential(nn.Conv2d(1, 1, 3), Fn(lambda y: y * 2),
                                                          nn.Conv2d(1, 2, 3)), x1)
    # From ONNX: pnnx's ONNX front end writes the same .bin.
    yield variant("thread-model-onnx", thread_model, x1, torchscript=False)
    yield variant("depthwise-3-onnx", two_convs, x3, 3, 3, 2, 3, True, 3, torchscript=False)
    yield variant("thread-model-dynamo-onnx", thread_model, x1, torchscript=False, opset=18, dynamo=True,
                  export_kwargs=ONE_FILE)
    # Near misses: even weight counts.
    yield variant("even-near-miss", two_convs, x1, 1, 2, 2)  # 18 weights
    yield variant("kernel-2-near-miss", two_convs, x1, 1, 1, 2, 2)  # 4 weights
