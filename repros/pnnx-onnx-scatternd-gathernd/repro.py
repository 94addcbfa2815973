"""KB120: pnnx from ONNX leaves ScatterND and GatherND unconverted (loftr.onnx); ncnn cannot load them."""

import torch

from kb.blocks import Fn, randn
from kb.export import Case


def assign(x):  # an assignment to a slice, y[:, :, 0] = ...: ScatterND
    y = x.clone()
    y[:, :, 0] = x[:, :, 1] * 2
    return y


def pick(x):  # feat[b_ids, i_ids], as LoFTR's fine matching picks windows: GatherND from dynamo
    return x[torch.tensor([0, 0, 0]), torch.tensor([1, 3, 4])]


def cases():
    x, f = randn(1, 4, 5, 6), randn(1, 6, 8)
    yield Case("scatternd", Fn(assign), (x,), opset=17, dynamo=False, ways=True)
    yield Case("gathernd", Fn(pick), (f,), opset=18, dynamo=True, ways=["dynamo-onnxsim"])
    # the workaround: the slice assignment as a concat
    cat = Fn(lambda x: torch.cat([x[:, :, 1:2] * 2, x[:, :, 1:]], dim=2))
    yield Case("scatternd-as-cat", cat, (x,), opset=17, dynamo=False, trigger=False, rewrites="scatternd")
    yield Case("fmod", Fn(lambda x: torch.fmod(x, 1.5)), (x,), opset=17, dynamo=False, trigger=False)  # ONNX Mod
