import torch.nn.functional as F
from kb.blocks import Fn, randn
from kb.export import Case


def separable(t):
    """Trilinear x2 as two bilinear resizes of 4-D views: H and W (depth folded into channels), then the depth."""
    n, c, d, h, w = 1, 2, 3, 4, 5
    y = F.interpolate(t.reshape(n, c * d, h, w), scale_factor=2, mode="bilinear")
    y = F.interpolate(y.reshape(n, c, d, 4 * h * w), size=(2 * d, 4 * h * w), mode="bilinear")
    return y.reshape(n, c, 2 * d, 2 * h, 2 * w)


def cases():
    x = randn(1, 2, 3, 4, 5)
    yield Case("trilinear", Fn(lambda t: F.interpolate(t, scale_factor=2, mode="trilinear")), (x,), dynamo=False, ways=True)
    yield Case("nearest-5d", Fn(lambda t: F.interpolate(t, scale_factor=2, mode="nearest")), (x,), dynamo=False, trigger=False)
    yield Case("separable", Fn(separable), (x,), dynamo=False, trigger=False, rewrites="trilinear")


def variants():
    x = randn(1, 2, 3, 4, 5)
    yield Case("size", Fn(lambda t: F.interpolate(t, size=(5, 6, 7), mode="trilinear")), (x,), dynamo=False)
    yield Case("size-dynamo", Fn(lambda t: F.interpolate(t, size=(5, 6, 7), mode="trilinear")), (x,), dynamo=True)
    yield Case("align-corners", Fn(lambda t: F.interpolate(t, scale_factor=2, mode="trilinear", align_corners=True)), (x,), dynamo=False)
    yield Case("downscale", Fn(lambda t: F.interpolate(t, scale_factor=0.5, mode="trilinear")), (randn(1, 2, 4, 6, 8),), dynamo=False)
    # Near misses: nearest on a 5-D tensor, bilinear on a 4-D one.
    yield Case("nearest-near-miss", Fn(lambda t: F.interpolate(t, size=(5, 6, 7), mode="nearest")), (x,), dynamo=False)
    yield Case("bilinear-4d-near-miss", Fn(lambda t: F.interpolate(t, scale_factor=2, mode="bilinear")), (randn(1, 2, 4, 5),), dynamo=False)
