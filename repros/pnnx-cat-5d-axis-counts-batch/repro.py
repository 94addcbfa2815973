"""KB170: torch.cat of 5-D model inputs, traced and converted by pnnx: no op gives pnnx the batch axis ("fallback
batch axis 233"), so its Concat counts the batch as an axis (torch's dim 1 stays ncnn's axis 1). ncnn holds at most
4 dims, so the inputs go in without the batch, and axis 1 of that 4-D blob is the depth: ncnn concatenates the
wrong axis (Tencent/ncnn#4781)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Cat(nn.Module):
    """torch.cat of the inputs on `dim`, then a scale (so the output is not the Concat's own blob)."""

    def __init__(self, dim=1, conv3d=False, squeeze=False):
        super().__init__()
        self.dim, self.squeeze = dim, squeeze
        self.conv = nn.Conv3d(2, 2, 1) if conv3d else None

    def forward(self, *xs):
        if self.conv is not None:  # near miss: a Conv3d gives pnnx the batch axis
            xs = [self.conv(x) for x in xs]
        if self.squeeze:  # the workaround: drop the batch in the model, cat the 4-D tensors on dim - 1
            return torch.cat([x.squeeze(0) for x in xs], dim=self.dim - 1).unsqueeze(0) * 2
        return torch.cat(list(xs), dim=self.dim) * 2


def cases():
    a, b = randn(1, 2, 3, 5, 4), randn(1, 2, 3, 5, 4, seed=2)
    yield Case("cat-5d", seeded(Cat), (a, b), input_names=["in0", "in1"], output_names=["out0"], opset=13,
               dynamo=False)
    # The workaround: squeeze the batch in the model and cat the 4-D tensors on dim 0
    yield Case("squeeze-batch", seeded(Cat, 1, False, True), (a, b), input_names=["in0", "in1"],
               output_names=["out0"], opset=13, dynamo=False, trigger=False, rewrites="cat-5d")


def variants():
    a, b, c = randn(1, 2, 3, 5, 4, seed=3), randn(1, 2, 3, 5, 4, seed=4), randn(1, 2, 3, 5, 4, seed=5)
    io2, io3 = dict(input_names=["in0", "in1"], output_names=["out0"]), dict(input_names=["in0", "in1", "in2"],
                                                                          output_names=["out0"])
    yield Case("cat-dim2", seeded(Cat, 2), (a, b), opset=13, dynamo=False, **io2)
    yield Case("cat-dim3", seeded(Cat, 3), (a, b), opset=13, dynamo=False, **io2)
    yield Case("cat-dim4", seeded(Cat, 4), (a, b), opset=13, dynamo=False, **io2)
    yield Case("cat-last", seeded(Cat, -1), (a, b), opset=13, dynamo=False, **io2)
    yield Case("cat-three", seeded(Cat), (a, b, c), opset=13, dynamo=False, **io3)
    yield Case("cat-uneven", seeded(Cat), (a, randn(1, 3, 3, 5, 4, seed=6)), opset=13, dynamo=False, **io2)
    yield Case("cat-thread-shape", seeded(Cat), (randn(1, 2, 8, 30, 4, seed=7), randn(1, 2, 8, 30, 4, seed=8)),
               opset=13, dynamo=False, **io2)
    yield Case("conv3d-near-miss", seeded(Cat, 1, True), (a, b), opset=13, dynamo=False, **io2)
    yield Case("cat-4d-near-miss", seeded(Cat, 0), (a[0], b[0]), opset=13, dynamo=False, **io2)
