import torch.nn.functional as F
from kb.blocks import Fn, randn
from kb.export import Case


def cases():
    x = randn(1, 2, 86, 86)  # Tencent/ncnn#3555: 86 x 86 upsampled to 256 x 256
    yield Case("scale-256-86", Fn(lambda t: F.interpolate(t, scale_factor=256 / 86)), (x,), opset=11, dynamo=False,
               ways=True)
    yield Case("size-256", Fn(lambda t: F.interpolate(t, size=(256, 256))), (x,), opset=11, dynamo=False,
               simplify=True, trigger=False, rewrites="scale-256-86")


def variants():
    yield Case("bilinear-scale-256-86", Fn(lambda t: F.interpolate(t, scale_factor=256 / 86, mode="bilinear")),
               (randn(1, 2, 86, 86, seed=2),), opset=13, dynamo=False)
    yield Case("downscale-third", Fn(lambda t: F.interpolate(t, scale_factor=1 / 3)), (randn(1, 2, 9, 9, seed=2),),
               opset=13, dynamo=False)
    yield Case("scale-2-near-miss", Fn(lambda t: F.interpolate(t, scale_factor=2.0)), (randn(1, 2, 86, 86, seed=2),),
               opset=13, dynamo=False)
