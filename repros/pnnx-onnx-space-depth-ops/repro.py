"""KB219: pnnx's ONNX front end and ONNX's SpaceToDepth / DepthToSpace, as tf2onnx writes them.

torch never writes these nodes so: F.pixel_unshuffle exports as Reshape-Transpose-Reshape, F.pixel_shuffle as
DepthToSpace with mode=CRD written out (opset 11+). As in KB218, the models compute TensorFlow's order (the ONNX
definitions of SpaceToDepth and of DepthToSpace in DCR mode) with reshape and permute, and `edit=` replaces that
Reshape-Transpose-Reshape by the one node tf2onnx writes (blocksize only, no mode; or the mode written out): the
same function, so torch's output stays the reference. The graph helpers are in kb.blocks, shared with KB218."""

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
    yield Case("depth-to-space-dcr", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_depth_to_space_dcr)
    # Workarounds, fed the same inputs: in torch, pixel_unshuffle / pixel_shuffle with the neighbouring conv's
    # channels permuted to match (exported as torch writes them).
    yield Case("passthrough-unshuffle", PassthroughUnshuffle(seeded(Passthrough)), (img,), opset=13, dynamo=False,
               trigger=False, rewrites="passthrough")
    yield Case("sr-head-shuffle", SrHeadShuffle(seeded(SrHead)), (img,), opset=13, dynamo=False, trigger=False,
               rewrites="sr-head-no-mode")
    # Controls: torch's own F.pixel_shuffle (DepthToSpace with mode=CRD written out) and F.pixel_unshuffle.
    yield Case("pixel-shuffle", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=13, dynamo=False, trigger=False)
    yield Case("pixel-unshuffle", Fn(lambda t: F.pixel_unshuffle(t, 2)), (x,), opset=13, dynamo=False,
               trigger=False)


def variants():
    x, img = randn(1, 16, 8, 8, seed=2), randn(1, 3, 16, 16, seed=2)
    x9 = randn(1, 18, 6, 6, seed=2)
    yield Case("space-to-depth-b3", Fn(lambda t: space_to_depth(t, 3)), (randn(1, 4, 9, 9, seed=2),), opset=13,
               dynamo=False, edit=to_space_to_depth)
    yield Case("space-to-depth-b4", Fn(lambda t: space_to_depth(t, 4)), (x,), opset=13, dynamo=False,
               edit=to_space_to_depth)
    yield Case("passthrough-opset18", seeded(Passthrough, seed=3), (img,), opset=18, dynamo=False,
               edit=to_space_to_depth)
    yield Case("depth-to-space-no-mode-b3", Fn(lambda t: depth_to_space_dcr(t, 3)), (x9,), opset=13, dynamo=False,
               edit=to_depth_to_space)
    yield Case("depth-to-space-no-mode-b4", Fn(lambda t: depth_to_space_dcr(t, 4)), (randn(1, 32, 4, 4, seed=2),),
               opset=13, dynamo=False, edit=to_depth_to_space)
    yield Case("sr-head-no-mode-opset9", seeded(SrHead, seed=3), (img,), opset=9, dynamo=False,
               edit=to_depth_to_space)
    yield Case("sr-head-no-mode-r3", seeded(SrHead, r=3, seed=3), (img,), opset=13, dynamo=False,
               edit=to_depth_to_space)
    # The mode written out: DCR (as another exporter writes it) and CRD (torch's pixel_shuffle); torch's exports.
    yield Case("depth-to-space-dcr-b3", Fn(lambda t: depth_to_space_dcr(t, 3)), (x9,), opset=13, dynamo=False,
               edit=to_depth_to_space_dcr)
    yield Case("depth-to-space-dcr-b4", Fn(lambda t: depth_to_space_dcr(t, 4)), (randn(1, 32, 4, 4, seed=2),),
               opset=13, dynamo=False, edit=to_depth_to_space_dcr)
    yield Case("sr-head-dcr", seeded(SrHead, seed=3), (img,), opset=13, dynamo=False, edit=to_depth_to_space_dcr)
    yield Case("pixel-shuffle-b3", Fn(lambda t: F.pixel_shuffle(t, 3)), (x9,), opset=13, dynamo=False)
    yield Case("pixel-shuffle-b4", Fn(lambda t: F.pixel_shuffle(t, 4)), (randn(1, 32, 4, 4, seed=2),), opset=13,
               dynamo=False)
    yield Case("pixel-shuffle-crd-dynamo", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=18, dynamo=True)
    yield Case("pixel-shuffle-opset9", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=9, dynamo=False)
    yield Case("pixel-unshuffle-b3", Fn(lambda t: F.pixel_unshuffle(t, 3)), (randn(1, 4, 9, 9, seed=2),), opset=13,
               dynamo=False)
    yield Case("pixel-unshuffle-b4", Fn(lambda t: F.pixel_unshuffle(t, 4)), (x,), opset=13, dynamo=False)
    yield Case("pixel-unshuffle-dynamo", Fn(lambda t: F.pixel_unshuffle(t, 2)), (x,), opset=18, dynamo=True)
    # The same functions left as torch exports them, with no edit: a 6-D Reshape-Transpose-Reshape.
    yield Case("chain-space-to-depth", Fn(lambda t: space_to_depth(t, 2)), (x,), opset=13, dynamo=False)
    yield Case("chain-depth-to-space", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False)
