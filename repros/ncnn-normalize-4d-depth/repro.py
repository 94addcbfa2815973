"""KB082: ncnn's Normalize on a 4-D blob (ONNX: F.normalize(x, dim=1) on a rank-5 tensor, the batch axis dropped)
normalizes only the first depth slice before 1.0.20260526; the other slices pass through unchanged."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, seeded
from kb.export import Case

C, D, H, W = 8, 4, 5, 6  # a (1, C, D, H, W) feature map: C channels, D frames (or slices) of H x W


def l2_channels(y):
    """What users write: L2-normalize every position's channel vector."""
    return F.normalize(y, dim=1)


def l2_channels_fold_depth(y):
    """Workaround: fold the depth into the height, so ncnn normalizes a 3-D blob (c, d*h, w); same values."""
    n, c, d, h, w = y.shape
    return F.normalize(y.reshape(n, c, d * h, w), dim=1).reshape(n, c, d, h, w)


def l2_channels_written_out(y):
    """Workaround: the norm written out (F.normalize's own formula), which pnnx turns into Reduction, Clip and
    BinaryOp instead of a Normalize layer; same values."""
    return y / torch.linalg.vector_norm(y, dim=1, keepdim=True).clamp(min=1e-12)


def conv_then(head, conv=nn.Conv3d, channels=C):
    """A pointwise conv (Conv3d for a video or volume, Conv2d for an image), then `head` on its output."""
    return ConvThen(conv(channels, C, 1), head)


class ReluThen(nn.Module):
    """No weights: the 5-D model input, ReLU, then `head` (onnx2ncnn writes no Conv3d, so its path starts here)."""

    def __init__(self, head):
        super().__init__()
        self.head = head

    def forward(self, x):
        return self.head(torch.relu(x))


class VideoEmbedding(nn.Module):
    """A video / 3-D medical feature block: Conv3d 3x3x3, BatchNorm3d, ReLU, then per-position L2 features."""

    def __init__(self, cin=3, cout=16):
        super().__init__()
        self.conv, self.bn = nn.Conv3d(cin, cout, 3, padding=1), nn.BatchNorm3d(cout)
        with torch.no_grad():  # non-trivial BatchNorm statistics, as after training
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return F.normalize(torch.relu(self.bn(self.conv(x))), dim=1)


class Volume(nn.Module):
    """A 3-D medical volume (one channel): a strided 3x3x3 Conv3d to 8 channels, then per-voxel L2 features."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, C, 3, stride=2, padding=1)

    def forward(self, x):
        return F.normalize(self.conv(x), dim=1)


class ScaledL2Norm(nn.Module):
    """SSD-style L2Norm on a volume: normalize over the channels, then a learned per-channel scale."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(C, C, 1)
        # a moderate learned scale: pnnx's fp16 weights keep a correct conversion within the checks' tolerance
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, C).reshape(1, C, 1, 1, 1))

    def forward(self, x):
        return F.normalize(self.conv(x), dim=1) * self.scale


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    torch.manual_seed(0)
    x5, x4 = torch.randn(1, C, D, H, W), torch.randn(1, C, H, W)
    ts = dict(opset=17, dynamo=False, torchscript=True, **IO)
    conv3d = seeded(lambda: conv_then(l2_channels))
    yield Case("conv3d-normalize", conv3d, (x5,), **ts)
    # onnx2ncnn fuses ReduceL2 - Clip - Expand - Div into Normalize only without the Constant and Shape nodes
    # torch writes in between: after onnx-simplifier, as users run it before onnx2ncnn.
    yield Case("onnx2ncnn-normalize", ReluThen(l2_channels), (x5,), opset=13, dynamo=False, simplify=True, **IO)
    # Workarounds: the same conv (same weights) and the same input, rewritten.
    fold = conv_then(l2_channels_fold_depth)
    fold.conv = conv3d.conv
    yield Case("conv3d-fold-depth", fold, (x5,), trigger=False, rewrites="conv3d-normalize", **ts)
    written = conv_then(l2_channels_written_out)
    written.conv = conv3d.conv
    yield Case("conv3d-written-out", written, (x5,), trigger=False, rewrites="conv3d-normalize", **ts)
    # (onnx2ncnn writes no depth into a Reshape, so the fold-depth rewrite cannot come back to 5-D on its path.)
    yield Case("onnx2ncnn-written-out", ReluThen(l2_channels_written_out), (x5,), opset=13, dynamo=False,
               simplify=True, trigger=False, rewrites="onnx2ncnn-normalize", **IO)
    # Controls on the same paths: the same F.normalize on an image's 4-D tensor (an ncnn 3-D blob).
    yield Case("conv2d-normalize", seeded(lambda: conv_then(l2_channels, nn.Conv2d)), (x4,), trigger=False, **ts)
    yield Case("onnx2ncnn-normalize-4d", ReluThen(l2_channels), (x4,), opset=13, dynamo=False, simplify=True,
               trigger=False, **IO)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), opset=opset, dynamo=dynamo, **IO, **kw)


def variants():
    torch.manual_seed(1)
    x5, x4 = torch.randn(1, C, D, H, W), torch.randn(1, C, H, W)
    dyn = dict(opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("opset13", seeded(lambda: conv_then(l2_channels)), x5, opset=13)
    yield variant("opset18", seeded(lambda: conv_then(l2_channels)), x5, opset=18)
    yield variant("dynamo", seeded(lambda: conv_then(l2_channels)), x5, **dyn)
    yield variant("onnxsim", seeded(lambda: conv_then(l2_channels)), x5, simplify=True)
    yield variant("volume-conv3x3x3", seeded(Volume), torch.randn(1, 1, 8, 10, 12))
    yield variant("video-embedding-block", seeded(VideoEmbedding), torch.randn(1, 3, 6, 8, 8))
    yield variant("scaled-l2norm", seeded(ScaledL2Norm), x5)
    yield variant("two-frames", seeded(lambda: conv_then(l2_channels)), torch.randn(1, C, 2, H, W))
    # Near misses: a depth of 1 (the one slice ncnn does normalize), and an image's 4-D tensor (an ncnn 3-D
    # blob), both written as the same Normalize layer.
    yield variant("depth-1-near-miss", seeded(lambda: conv_then(l2_channels)), torch.randn(1, C, 1, H, W))
    yield variant("conv2d-near-miss", seeded(lambda: conv_then(l2_channels, nn.Conv2d)), x4)
    yield variant("conv2d-dynamo-near-miss", seeded(lambda: conv_then(l2_channels, nn.Conv2d)), x4, **dyn)
