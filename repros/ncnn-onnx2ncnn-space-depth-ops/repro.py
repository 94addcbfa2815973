"""KB218: onnx2ncnn and ONNX's SpaceToDepth / DepthToSpace. SpaceToDepth has no rule (it is written through and
ncnn has no such layer); a DepthToSpace without `mode` (ONNX's default, DCR) is written as ncnn's PixelShuffle in
CRD order, which gives other values.

torch never writes these nodes so: F.pixel_unshuffle exports as Reshape-Transpose-Reshape, F.pixel_shuffle as
DepthToSpace with mode=CRD written out (opset 11+). The models here compute TensorFlow's order (the ONNX
definitions of SpaceToDepth and of DepthToSpace in DCR mode) with reshape and permute, and `edit=` replaces that
Reshape-Transpose-Reshape by the one node tf2onnx writes for tf.nn.space_to_depth / depth_to_space (blocksize only,
no mode): the same function, so torch's output stays the reference."""

import torch.nn.functional as F

from kb.blocks import (Fn, Passthrough, PassthroughUnshuffle, SrHead, SrHeadShuffle, depth_to_space_dcr, randn,
                       seeded, space_to_depth, to_depth_to_space, to_depth_to_space_dcr, to_space_to_depth)
from kb.export import Case


def cases():
    x, img = randn(1, 8, 8, 8), randn(1, 3, 16, 16)
    yield Case("space-to-depth", Fn(lambda t: space_to_depth(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_space_to_depth, ways=True)
    yield Case("passthrough", seeded(Passthrough), (img,), opset=13, dynamo=False, edit=to_space_to_depth)
    yield Case("depth-to-space-no-mode", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_depth_to_space, ways=True)
    yield Case("sr-head-no-mode", seeded(SrHead), (img,), opset=13, dynamo=False, edit=to_depth_to_space)
    # Workarounds, fed the same inputs: mode="DCR" written into the node; in torch, pixel_unshuffle / pixel_shuffle
    # with the neighbouring conv's channels permuted to match (exported as torch writes them).
    yield Case("depth-to-space-dcr", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_depth_to_space_dcr, trigger=False, rewrites="depth-to-space-no-mode")
    yield Case("passthrough-unshuffle", PassthroughUnshuffle(seeded(Passthrough)), (img,), opset=13, dynamo=False,
               trigger=False, rewrites="passthrough")
    yield Case("sr-head-shuffle", SrHeadShuffle(seeded(SrHead)), (img,), opset=13, dynamo=False, trigger=False,
               rewrites="sr-head-no-mode")
    # Control: torch's own F.pixel_shuffle (DepthToSpace with mode=CRD written out).
    yield Case("pixel-shuffle", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=13, dynamo=False, trigger=False)


def variants():
    x, img = randn(1, 16, 8, 8, seed=2), randn(1, 3, 16, 16, seed=2)
    yield Case("space-to-depth-b4", Fn(lambda t: space_to_depth(t, 4)), (x,), opset=13, dynamo=False,
               edit=to_space_to_depth)
    yield Case("passthrough-dynamo", seeded(Passthrough, seed=3), (img,), opset=18, dynamo=True,
               edit=to_space_to_depth)
    # 32 channels: with C / b^2 = 1 output channel, DCR and CRD read the same order.
    yield Case("depth-to-space-no-mode-b4", Fn(lambda t: depth_to_space_dcr(t, 4)), (randn(1, 32, 4, 4, seed=2),),
               opset=13, dynamo=False, edit=to_depth_to_space)
    yield Case("sr-head-no-mode-opset9", seeded(SrHead, seed=3), (img,), opset=9, dynamo=False,
               edit=to_depth_to_space)
    yield Case("sr-head-no-mode-r3", seeded(SrHead, r=3, seed=3), (img,), opset=13, dynamo=False,
               edit=to_depth_to_space)
    # Near misses: the mode written out (DCR, or CRD as torch writes it), and torch's pixel (un)shuffle exports.
    yield Case("depth-to-space-dcr-b4", Fn(lambda t: depth_to_space_dcr(t, 4)), (randn(1, 32, 4, 4, seed=2),),
               opset=13, dynamo=False, edit=to_depth_to_space_dcr)
    yield Case("sr-head-dcr", seeded(SrHead, seed=3), (img,), opset=13, dynamo=False, edit=to_depth_to_space_dcr)
    yield Case("pixel-shuffle-crd-dynamo", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=18, dynamo=True)
    yield Case("pixel-shuffle-opset9", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=9, dynamo=False)
    yield Case("pixel-unshuffle", Fn(lambda t: F.pixel_unshuffle(t, 2)), (x,), opset=13, dynamo=False)
    yield Case("pixel-unshuffle-dynamo", Fn(lambda t: F.pixel_unshuffle(t, 2)), (x,), opset=18, dynamo=True)
