"""KB231: on an ARM CPU with fp16 arithmetic (ARMv8.2, ncnn's default there), a 3x3 stride-2 depthwise convolution
whose channels are a multiple of 8 (fp16 blobs packed by 8) gets one output column wrong when its output width
leaves 2 or 3 after the groups of 4 (width 3, 6, 7, 10, 11, ...): the second of the last pair of columns, on every
row and channel, is off by about the size of the outputs. Every other column is right to fp16's rounding.

The models: the layer alone (64 channels, 12x12 input, 6x6 output) and a RetinaFace-like face detector of the
usual mobilenet0.25 kind at 96x96, where the 64- and 128-channel stride-2 depthwise layers have 6- and 3-wide
outputs. Its
output is the landmark head's, in pixels (see `retinaface`)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])


def dwconv(channels, kernel=3, stride=2):
    """One depthwise convolution with a bias (torch's default initialisation), as a mobilenet has them."""
    return nn.Conv2d(channels, channels, kernel, stride, kernel // 2, groups=channels)


class Columns(nn.Module):
    """The depthwise convolution, then only the output columns [start, stop) (a Crop in ncnn): where in the
    output the wrong values are."""

    def __init__(self, conv, start, stop):
        super().__init__()
        self.conv, self.start, self.stop = conv, start, stop

    def forward(self, x):
        return self.conv(x)[..., self.start:self.stop]


# -- the RetinaFace-like detector (mobilenet0.25 backbone, FPN, SSH context modules, class/box/landmark heads) --

def conv_bn(cin, cout, stride=1, leaky=0.0, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout, momentum=None),
                         nn.LeakyReLU(leaky))


def conv_bn_no_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout, momentum=None))


def conv_dw(cin, cout, stride, leaky=0.1):
    return nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin, momentum=None),
                         nn.LeakyReLU(leaky), nn.Conv2d(cin, cout, 1, 1, 0, bias=False),
                         nn.BatchNorm2d(cout, momentum=None), nn.LeakyReLU(leaky))


class SSH(nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.c3 = conv_bn_no_relu(c, c // 2)
        self.c5_1 = conv_bn(c, c // 4, leaky=0.1)
        self.c5_2 = conv_bn_no_relu(c // 4, c // 4)
        self.c7_2 = conv_bn(c // 4, c // 4, leaky=0.1)
        self.c7_3 = conv_bn_no_relu(c // 4, c // 4)

    def forward(self, x):
        b = self.c5_1(x)
        return F.relu(torch.cat([self.c3(x), self.c5_2(b), self.c7_3(self.c7_2(b))], 1))


STEPS = (8, 16, 32)
MIN_SIZES = ((16, 32), (64, 128), (256, 512))  # RetinaFace's anchors, two per position and level


class RetinaFace(nn.Module):
    """RetinaFace with the mobilenet0.25 backbone (biubug6's layout): stride-2 depthwise blocks at 32, 64, 128 and
    256 channels, an FPN of 64 channels (nearest upsampling), an SSH module per level and 1x1 heads. forward()
    returns the landmark head's output, (1, anchors, 10)."""

    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(conv_bn(3, 8, 2, 0.1), conv_dw(8, 16, 1), conv_dw(16, 32, 2), conv_dw(32, 32, 1),
                                    conv_dw(32, 64, 2), conv_dw(64, 64, 1))
        self.stage2 = nn.Sequential(conv_dw(64, 128, 2), *[conv_dw(128, 128, 1) for _ in range(5)])
        self.stage3 = nn.Sequential(conv_dw(128, 256, 2), conv_dw(256, 256, 1))
        self.out1, self.out2, self.out3 = (conv_bn(c, 64, 1, 0.1, k=1) for c in (64, 128, 256))
        self.merge1, self.merge2 = conv_bn(64, 64, 1, 0.1), conv_bn(64, 64, 1, 0.1)
        self.ssh = nn.ModuleList([SSH(), SSH(), SSH()])
        self.landmarks = nn.ModuleList([nn.Conv2d(64, 20, 1) for _ in range(3)])

    def forward(self, x):
        c1 = self.stage1(x)
        c2 = self.stage2(c1)
        c3 = self.stage3(c2)
        o1, o2, o3 = self.out1(c1), self.out2(c2), self.out3(c3)
        o2 = self.merge2(o2 + F.interpolate(o3, scale_factor=2.0, mode="nearest"))
        o1 = self.merge1(o1 + F.interpolate(o2, scale_factor=2.0, mode="nearest"))
        feats = [s(f) for s, f in zip(self.ssh, (o1, o2, o3))]
        return torch.cat([h(f).permute(0, 2, 3, 1).reshape(1, -1, 10) for h, f in zip(self.landmarks, feats)], 1)


def retinaface(size=96, seed=1):
    """The detector with torch's default initialisation, BatchNorm scales in [0.5, 1.5] and shifts N(0, 0.2) and
    running statistics from four training-mode passes over normal images (as KB229 makes its nets), then
    RetinaFace's landmark decoding folded into the landmark heads: RetinaFace decodes a landmark as the anchor's
    centre plus the output times 0.1 (its variance) times the anchor's size, so each head's 1x1 weights and bias
    are multiplied by 0.1 x the anchor's size in pixels. Each output is then a landmark's x or y offset from its
    anchor's centre in pixels, and a max abs diff is the largest shift of a landmark along x or y, in pixels."""
    torch.manual_seed(seed)
    net = RetinaFace()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
        net.train()
        for _ in range(4):
            net(torch.randn(2, 3, size, size))
        for head, sizes in zip(net.landmarks, MIN_SIZES):
            scale = torch.tensor([0.1 * s for s in sizes]).repeat_interleave(10)
            head.weight.mul_(scale[:, None, None, None])
            head.bias.mul_(scale)
    return net.eval()


def cases():
    # The layer alone: 64 channels, 12x12 -> 6x6 (4 + 2 columns).
    yield Case("dw-64-w12", seeded(dwconv, 64), (randn(1, 64, 12, 12),), opset=11, dynamo=False, **IO)
    # The face detector at 96x96: its 64- and 128-channel stride-2 depthwise layers map 12x12 to 6x6 and 6x6 to 3x3.
    yield Case("retinaface-96", retinaface(), (randn(1, 3, 96, 96),), opset=11, dynamo=False, **IO)
    # The 6x6 output of dw-64-w12 split: its column 5 (the second of the 2-column step after the group of 4) ...
    yield Case("dw-64-w12-column-5", seeded(lambda: Columns(dwconv(64), 5, 6)), (randn(1, 64, 12, 12),), opset=11,
               dynamo=False, **IO)
    # ... and its columns 0 to 4 (a control: right).
    yield Case("dw-64-w12-columns-0-4", seeded(lambda: Columns(dwconv(64), 0, 5)), (randn(1, 64, 12, 12),), opset=11,
               dynamo=False, trigger=False, **IO)
    # Controls: an output width of 8 (two groups of 4), and 12 channels (not a multiple of 8: packed by 4).
    yield Case("dw-64-w16", seeded(dwconv, 64), (randn(1, 64, 16, 16),), opset=11, dynamo=False, trigger=False, **IO)
    yield Case("dw-12-w12", seeded(dwconv, 12), (randn(1, 12, 12, 12),), opset=11, dynamo=False, trigger=False, **IO)


def variants():
    # Output widths that leave 2 or 3 after the groups of 4 (3, 7, 10, 11, 14, 6 of a 16x12 input) ...
    yield Case("w6", seeded(dwconv, 8), (randn(1, 8, 6, 6),), opset=11, dynamo=False, **IO)
    yield Case("w13", seeded(dwconv, 8), (randn(1, 8, 13, 13),), opset=11, dynamo=False, **IO)
    yield Case("w14", seeded(dwconv, 8), (randn(1, 8, 14, 14),), opset=11, dynamo=False, **IO)
    yield Case("w20", seeded(dwconv, 8), (randn(1, 8, 20, 20),), opset=11, dynamo=False, **IO)
    yield Case("w22", seeded(dwconv, 8), (randn(1, 8, 22, 22),), opset=11, dynamo=False, **IO)
    yield Case("w28", seeded(dwconv, 8), (randn(1, 8, 28, 28),), opset=11, dynamo=False, **IO)
    yield Case("h16-w12", seeded(dwconv, 8), (randn(1, 8, 16, 12),), opset=11, dynamo=False, **IO)
    # ... at other channel counts (multiples of 8) ...
    yield Case("c16-w12", seeded(dwconv, 16), (randn(1, 16, 12, 12),), opset=11, dynamo=False, **IO)
    yield Case("c128-w12", seeded(dwconv, 128), (randn(1, 128, 12, 12),), opset=11, dynamo=False, **IO)
    # ... and near misses: output widths 5, 9 and 8 (a 12x16 input), stride 1, a 5x5 kernel, 4 channels.
    yield Case("w10", seeded(dwconv, 8), (randn(1, 8, 10, 10),), opset=11, dynamo=False, **IO)
    yield Case("w18", seeded(dwconv, 8), (randn(1, 8, 18, 18),), opset=11, dynamo=False, **IO)
    yield Case("h12-w16", seeded(dwconv, 8), (randn(1, 8, 12, 16),), opset=11, dynamo=False, **IO)
    yield Case("stride1-w12", seeded(dwconv, 8, 3, 1), (randn(1, 8, 12, 12),), opset=11, dynamo=False, **IO)
    yield Case("k5-w12", seeded(dwconv, 8, 5), (randn(1, 8, 12, 12),), opset=11, dynamo=False, **IO)
    yield Case("c4-w12", seeded(dwconv, 4), (randn(1, 4, 12, 12),), opset=11, dynamo=False, **IO)
