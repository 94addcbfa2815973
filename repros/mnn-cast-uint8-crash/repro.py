"""KB112: a Cast to uint8 of a model input (x.to(torch.uint8) / x.byte() as the first op, e.g. an image given as
float and turned into 8-bit pixels) kills mnnconvert with SIGSEGV while it optimizes the net; no model is written.
The same cast after another op, and casts of the input to int8, int32 or int64, convert."""

import torch
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case


def pixels(seed=1, shape=(1, 3, 12, 12)):
    """An image in [0, 255) as float32."""
    return (randn(*shape, seed=seed) * 64 + 128).clamp(0, 254.5)


def net(then, seed=0):
    """`then` on the input (8-bit pixels), then a seeded Conv2d(3, 4, 3) on them scaled to [0, 1]."""
    return seeded(lambda: ConvThen(Fn(lambda t: then(t) / 255), nn.Conv2d(3, 4, 3, padding=1)), seed=seed)


def to_uint8(t):
    return t.to(torch.uint8).float()


def cases():
    x = pixels()
    io = dict(input_names=["x"], output_names=["y"])
    yield Case("input-to-uint8", net(to_uint8), (x,), **io, opset=17, dynamo=False)
    yield Case("input-to-uint8-dynamo", net(to_uint8), (x,), **io, opset=18, dynamo=True)
    # Control: the input cast to int32.
    yield Case("input-to-int32", net(lambda t: t.to(torch.int32).float()), (x,), **io, opset=17, dynamo=False,
               trigger=False)
    # Workarounds: floor instead of the cast (the pixels are not negative), or any op before the cast.
    yield Case("input-floor", net(torch.floor), (x,), **io, opset=17, dynamo=False, trigger=False,
               rewrites="input-to-uint8")
    yield Case("clamp-then-uint8", net(lambda t: t.clamp(0, 255).to(torch.uint8).float()), (x,), **io, opset=17,
               dynamo=False, trigger=False, rewrites="input-to-uint8")


def variants():
    x = pixels(seed=2)
    io = dict(input_names=["x"], output_names=["y"])
    yield Case("opset13", net(to_uint8, seed=3), (x,), **io, opset=13, dynamo=False)
    yield Case("onnxsim", net(to_uint8, seed=3), (x,), **io, opset=17, dynamo=False, simplify=True)
    yield Case("dynamo-opset20", net(to_uint8, seed=3), (x,), **io, opset=20, dynamo=True)
    yield Case("byte", net(lambda t: t.byte().float(), seed=3), (x,), **io, opset=17, dynamo=False)
    yield Case("uint8-then-int64", net(lambda t: t.to(torch.uint8).long().float(), seed=3), (x,), **io, opset=17,
               dynamo=False)
    yield Case("cast-only", Fn(to_uint8), (x,), **io, opset=17, dynamo=False)
    yield Case("cast-only-dynamo", Fn(to_uint8), (x,), **io, opset=18, dynamo=True)
    yield Case("batch-of-four", net(to_uint8, seed=3), (pixels(seed=2, shape=(4, 3, 12, 12)),), **io, opset=17,
               dynamo=False)
    # Near misses: the cast after another op, and casts of the input to int8, int32 and int64.
    yield Case("scaled-then-uint8-near-miss", net(lambda t: (t * 1.0 + 0.5).to(torch.uint8).float(), seed=3),
               (x,), **io, opset=17, dynamo=False)
    yield Case("int8-near-miss", net(lambda t: (t / 2).to(torch.int8).float(), seed=3), (x,), **io, opset=17,
               dynamo=False)
    yield Case("int8-input-near-miss", net(lambda t: t.to(torch.int8).float(), seed=3), (x / 2,), **io, opset=17,
               dynamo=False)
    yield Case("int32-near-miss", net(lambda t: t.to(torch.int32).float(), seed=3), (x,), **io, opset=18,
               dynamo=True)
    yield Case("int64-near-miss", net(lambda t: t.long().float(), seed=3), (x,), **io, opset=17, dynamo=False)
