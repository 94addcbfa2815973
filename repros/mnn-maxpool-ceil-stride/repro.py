import torch
from kb.blocks import Fn, randn
from kb.export import Case


def cases():
    x = randn(1, 2, 6, 6)
    yield Case("maxpool-ceil", torch.nn.MaxPool2d(1, 2, ceil_mode=True), (x,), dynamo=False, ways=True)
    yield Case("strided-slice", Fn(lambda t: t[:, :, ::2, ::2]), (x,), dynamo=False, trigger=False, rewrites="maxpool-ceil")
