"""KB078: ncnn 1.0.20221128's Reshape between a 3-D and a 4-D blob (ONNX: rank 4 <-> rank 5, the batch axis
dropped) that keeps the channel count: 3-D -> 4-D loses the depth axis, 4-D -> 3-D gives an empty blob."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, seeded
from kb.export import Case

C, D, H, W = 24, 3, 5, 4  # a (1, C, D, H, W) feature map after a Conv3d


def conv3d_then(view):
    """A pointwise Conv3d (so pnnx knows the batch axis), then `view` on its (1, C, D, H, W) output."""
    return ConvThen(nn.Conv3d(C, C, 1), view)


def conv2d_then(view):
    """A pointwise Conv2d, then `view` on its (1, 8, 4, 5) output."""
    return ConvThen(nn.Conv2d(8, 8, 1), view)


# The views. In ncnn terms (no batch axis): a (1, C, D, H, W) tensor is a 4-D blob, (1, C, H, W) a 3-D one.
def normalize_roundtrip(x):
    """Tencent/ncnn#4389's graph in small: 4-D blob -> 3-D with other channels, L2-normalize over the channels,
    -> 4-D with the same channels (8, 9, 20 -> 8, 9, 1, 20)."""
    return F.normalize(x.reshape(1, 8, 9, 20), dim=1).reshape(1, 8, 9, 1, 20)


def normalize_roundtrip_keep_4d(x):
    """The workaround #4389 found (11=1 on the first Reshape), in torch: keep a depth axis of 1, so both reshapes
    keep the rank: 4-D -> 4-D (8, 1, 9, 20), normalize, -> 4-D (8, 9, 1, 20). Same values as the original."""
    return F.normalize(x.reshape(1, 8, 1, 9, 20), dim=1).reshape(1, 8, 9, 1, 20)


def merge_depth(x):
    """(1, C, D, H, W) -> (1, C, D, H*W): 4-D blob -> 3-D, the same channels."""
    return x.reshape(1, C, D, H * W)


def merge_depth_via_flat(x):
    """The same result through a (1, C*D, H*W) tensor (a 2-D blob): 4-D -> 2-D -> 3-D. pnnx folds two reshapes
    in a row into one (the original): the .clone() between them keeps both (from TorchScript)."""
    return x.reshape(1, C * D, H * W).clone().reshape(1, C, D, H * W)


def split_depth(x):
    """(1, 8, 4, 5) -> (1, 8, 2, 2, 5): 3-D blob -> 4-D, the same channels."""
    return x.reshape(1, 8, 2, 2, 5)


def split_depth_via_flat(x):
    """The same result through a (1, 8*4, 5) tensor (a 2-D blob): 3-D -> 2-D -> 4-D (.clone(): see above)."""
    return x.reshape(1, 32, 5).clone().reshape(1, 8, 2, 2, 5)


def merge_depth_into_channels(x):
    """Control: (1, C, D, H, W) -> (1, C*D, H, W): 4-D blob -> 3-D, but the channel count changes."""
    return x.reshape(1, C * D, H, W)


class TemporalSoftmax(nn.Module):
    """A video block: Conv3d, BatchNorm, ReLU, softmax over each frame's positions (merge H and W, softmax,
    split them back): 4-D -> 3-D -> 4-D blobs, the channels kept both times."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv3d(C, C, 3, padding=1), nn.BatchNorm3d(C)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return y.reshape(1, C, D, H * W).softmax(-1).reshape(1, C, D, H, W)


class Flat(nn.Module):
    """Near miss for the onnx2ncnn path: the (1, C, D, H, W) model input, a ReLU, then `view`."""

    def __init__(self, view):
        super().__init__()
        self.view = view

    def forward(self, x):
        return self.view(torch.relu(x))


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    torch.manual_seed(0)
    x5, x4 = torch.randn(1, C, D, H, W), torch.randn(1, 8, 4, 5)
    ts = dict(opset=13, dynamo=False, torchscript=True, **IO)
    rt = seeded(lambda: conv3d_then(normalize_roundtrip))
    merge = seeded(lambda: conv3d_then(merge_depth))
    split = seeded(lambda: conv2d_then(split_depth))
    yield Case("normalize-roundtrip", rt, (x5,), **ts)
    yield Case("merge-depth", merge, (x5,), **ts)
    yield Case("split-depth", split, (x4,), **ts)
    # onnx2ncnn writes 3-D targets only (no 11=), so only 4-D -> 3-D applies: the model input is the 4-D blob.
    yield Case("onnx2ncnn-merge-depth", Flat(merge_depth), (x5,), opset=13, dynamo=False, **IO)
    # Workarounds: the same weights (the same module objects' convs) and inputs, the rank kept or passed via 2-D.
    keep = conv3d_then(normalize_roundtrip_keep_4d)
    keep.conv = rt.conv
    yield Case("roundtrip-keep-4d", keep, (x5,), trigger=False, rewrites="normalize-roundtrip", **ts)
    flat = conv3d_then(merge_depth_via_flat)
    flat.conv = merge.conv
    yield Case("merge-depth-via-flat", flat, (x5,), trigger=False, rewrites="merge-depth", **ts)
    flat2 = conv2d_then(split_depth_via_flat)
    flat2.conv = split.conv
    yield Case("split-depth-via-flat", flat2, (x4,), trigger=False, rewrites="split-depth", **ts)
    yield Case("onnx2ncnn-merge-depth-via-flat", Flat(merge_depth_via_flat), (x5,), opset=13, dynamo=False,
               trigger=False, rewrites="onnx2ncnn-merge-depth", **IO)
    # Control on the same path: a 4-D -> 3-D reshape that changes the channel count.
    yield Case("merge-depth-into-channels", seeded(lambda: conv3d_then(merge_depth_into_channels)), (x5,),
               trigger=False, **ts)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), opset=opset, dynamo=dynamo, **IO, **kw)


def variants():
    torch.manual_seed(1)
    x5, x4 = torch.randn(1, C, D, H, W), torch.randn(1, 8, 4, 5)
    dyn = dict(opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("roundtrip-opset13", seeded(lambda: conv3d_then(normalize_roundtrip)), x5, opset=13)
    yield variant("roundtrip-opset17", seeded(lambda: conv3d_then(normalize_roundtrip)), x5)
    yield variant("roundtrip-dynamo", seeded(lambda: conv3d_then(normalize_roundtrip)), x5, **dyn)
    yield variant("roundtrip-onnxsim", seeded(lambda: conv3d_then(normalize_roundtrip)), x5, simplify=True)
    yield variant("merge-depth-opset18", seeded(lambda: conv3d_then(merge_depth)), x5, opset=18)
    yield variant("flatten-depth-height", seeded(lambda: conv3d_then(lambda y: torch.flatten(y, 2, 3))), x5)
    yield variant("split-depth-dynamo", seeded(lambda: conv2d_then(split_depth)), x4, **dyn)
    yield variant("temporal-softmax-block", seeded(TemporalSoftmax), x5)
    # Near misses: the rank changes but not the channel count's place (channels merged or split), the rank is
    # kept, or the blob goes to or from 2-D.
    yield variant("merge-into-channels-near-miss", seeded(lambda: conv3d_then(merge_depth_into_channels)), x5)
    yield variant("split-channels-near-miss", seeded(lambda: conv2d_then(lambda y: y.reshape(1, 4, 2, 4, 5))), x4)
    yield variant("same-rank-near-miss", seeded(lambda: conv3d_then(lambda y: y.reshape(1, C, D * H, 1, W))), x5)
    yield variant("flatten-to-2d-near-miss", seeded(lambda: conv3d_then(lambda y: torch.flatten(y, 2))), x5)
    yield variant("keep-4d-near-miss", seeded(lambda: conv3d_then(normalize_roundtrip_keep_4d)), x5, **dyn)
