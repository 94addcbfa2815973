"""KB221: a view to five axes with a leading 1 (x.view(1, 2, 4, 6, 10)) straight off the input, then a reduction over
one axis (sum, mean, amax), traced and converted by pnnx. pnnx does not know the batch axis there (233): its reshape
rule assumes the leading 1 is the batch and drops it ('assume reshape 5-rank tensor has batch_index 0'), but the
Reduction rule after it still counts that axis, so torch's dim 1 stays ncnn's axis 1, the next axis of the 4-D blob:
ncnn reduces the wrong axis and the output has another shape than torch's (releases before 20261020)."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

TS = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


class ConvThenSum(nn.Module):
    """A conv, then the same 5-D view and sum: after a conv pnnx knows the batch axis and shifts the sum's axis."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 1)

    def forward(self, x):
        return self.conv(x).view(1, 2, 4, 6, 10).sum(1)


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("sum-5d", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum(1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("mean-5d", Fn(lambda x: x.view(1, 2, 4, 6, 10).mean(1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("amax-5d", Fn(lambda x: x.view(1, 2, 4, 6, 10).amax(1)), (x,), opset=17, dynamo=False, **TS)
    # The workaround: leave the leading 1 out (a 4-D view), reduce dim 0, put the 1 back; judged against sum-5d.
    yield Case("sum-4d", Fn(lambda x: x.view(2, 4, 6, 10).sum(0).unsqueeze(0)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="sum-5d", **TS)
    yield Case("mean-4d", Fn(lambda x: x.view(2, 4, 6, 10).mean(0).unsqueeze(0)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="mean-5d", **TS)


def variants():
    x, s = randn(1, 8, 6, 10, seed=3), randn(1, 8, 60, seed=4)
    yield Case("sum-keepdim", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum(1, keepdim=True)), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("sum-axis2", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum(2)), (x,), opset=17, dynamo=False, **TS)
    yield Case("sum-axis4", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum(4)), (x,), opset=17, dynamo=False, **TS)
    yield Case("sum-two-axes", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum((1, 2))), (x,), opset=17, dynamo=False,
               **TS)
    yield Case("mean-keepdim", Fn(lambda x: x.view(1, 2, 4, 6, 10).mean(1, keepdim=True)), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("amax-axis2", Fn(lambda x: x.view(1, 2, 4, 6, 10).amax(2)), (x,), opset=17, dynamo=False, **TS)
    yield Case("amin-5d", Fn(lambda x: x.view(1, 2, 4, 6, 10).amin(1)), (x,), opset=17, dynamo=False, **TS)
    yield Case("relu-view-sum", Fn(lambda x: torch.relu(x).view(1, 2, 4, 6, 10).sum(1)), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("scaled-view-sum", Fn(lambda x: (x.view(1, 2, 4, 6, 10) * 2).sum(1)), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("view-from-3d-sum", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum(1)), (s,), opset=17, dynamo=False, **TS)
    yield Case("softmax-5d", Fn(lambda x: torch.softmax(x.view(1, 2, 4, 6, 10), 1)), (x,), opset=17, dynamo=False,
               **TS)
    # from ONNX: a ReduceMean (its axes an attribute at opset 17; ReduceSum's axes input is KB's pnnx-opset18-reduce-axes)
    yield Case("mean-5d-onnx", Fn(lambda x: x.view(1, 2, 4, 6, 10).mean(1)), (x,), opset=17, dynamo=False)
    # 6-D: the view itself cannot be written (KB073); recorded, not this entry's failure
    yield Case("sum-6d", Fn(lambda x: x.view(1, 2, 2, 2, 6, 10).sum(1)), (x,), opset=17, dynamo=False, **TS)
    # near misses: the last axis, after a conv (pnnx knows the batch axis), and a 4-D tensor
    yield Case("sum-last-axis-near-miss", Fn(lambda x: x.view(1, 2, 4, 6, 10).sum(-1)), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("conv-then-sum-near-miss", seeded(ConvThenSum), (x,), opset=17, dynamo=False, **TS)
    yield Case("sum-4d-near-miss", Fn(lambda x: x.sum(1)), (x,), opset=17, dynamo=False, **TS)
