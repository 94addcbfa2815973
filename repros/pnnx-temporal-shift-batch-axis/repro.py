"""KB243: a temporal shift module (TSM, as EfficientPhys uses it, pnnx/pnnx#137), traced and converted by pnnx from
TorchScript. The frames arrive on the batch axis (T, C, H, W); the shift views them as (n_batch, T, C, H, W), writes
shifted channel slices into a zeros_like buffer and views back. Older pnnx folds the whole graph into a constant
(after 'fallback batch axis 233 for operand 0'); newer pnnx leaves a Tensor.reshape ncnn cannot load."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

TS = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)


def shift(x, n_segment, fold_div=3, how="view", buffer="zeros_like"):
    """The frames-on-the-batch temporal shift (paraphrasing the thread's TSM.forward)."""
    nt, c, h, w = x.size()
    n_batch = nt // n_segment
    x5 = x.view(n_batch, n_segment, c, h, w) if how == "view" else x.reshape(n_batch, n_segment, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(x5) if buffer == "zeros_like" else torch.zeros(x5.size())
    out[:, :-1, :fold] = x5[:, 1:, :fold]                      # earlier frames take the next frame's channels
    out[:, 1:, fold:2 * fold] = x5[:, :-1, fold:2 * fold]      # later frames take the previous frame's
    out[:, :, 2 * fold:] = x5[:, :, 2 * fold:]                 # the rest stay
    return out.view(nt, c, h, w) if how == "view" else out.reshape(nt, c, h, w)


def shift_depth(x, fold_div=3):
    """The same shift with the frames on axis 2 of (1, C, T, H, W): slices and a cat, no buffer, no view."""
    c = x.size(1)
    fold = c // fold_div
    a, b, rest = x[:, :fold], x[:, fold:2 * fold], x[:, 2 * fold:]
    a = torch.cat([a[:, :, 1:], torch.zeros_like(a[:, :, :1])], 2)
    b = torch.cat([torch.zeros_like(b[:, :, :1]), b[:, :, :-1]], 2)
    return torch.cat([a, b, rest], 1)


class TSM(nn.Module):
    def __init__(self, n_segment=10, fold_div=3, how="view", buffer="zeros_like"):
        super().__init__()
        self.n_segment, self.fold_div, self.how, self.buffer = n_segment, fold_div, how, buffer

    def forward(self, x):
        return shift(x, self.n_segment, self.fold_div, self.how, self.buffer)


def shift_axis1(x, fold_div=3):
    """The shift on (1, T, C, L): frames on axis 1, channels on axis 2, slices and a cat."""
    fold = x.size(2) // fold_div
    a, b, rest = x[:, :, :fold], x[:, :, fold:2 * fold], x[:, :, 2 * fold:]
    a = torch.cat([a[:, 1:], torch.zeros_like(a[:, :1])], 1)
    b = torch.cat([torch.zeros_like(b[:, :1]), b[:, :-1]], 1)
    return torch.cat([a, b, rest], 2)


class ConvTSMConv(nn.Module):
    """A conv, the shift, a conv: the TSM inside a conv stack."""

    def __init__(self, n_segment=10):
        super().__init__()
        self.a, self.b, self.n_segment = nn.Conv2d(3, 6, 3, padding=1), nn.Conv2d(6, 6, 3, padding=1), n_segment

    def forward(self, x):
        return self.b(shift(torch.tanh(self.a(x)), self.n_segment))


class ViewOnly(nn.Module):
    """Near miss: the same 5-D view and back, without the slice writes."""

    def __init__(self, n_segment=10):
        super().__init__()
        self.n_segment = n_segment

    def forward(self, x):
        nt, c, h, w = x.size()
        return (x.view(nt // self.n_segment, self.n_segment, c, h, w) * 2).view(nt, c, h, w)


class AttentionMask(nn.Module):
    def forward(self, x):
        s = x.sum(2, keepdim=True).sum(3, keepdim=True)
        return x / s * x.size(2) * x.size(3) * 0.5


class EfficientPhysStage(nn.Module):
    """EfficientPhys's first stage, small: diff over frames, BatchNorm2d, TSM, conv+tanh, TSM, conv+tanh, attention
    mask, AvgPool2d, two Linear (frames on the batch axis, as the model is written)."""

    def __init__(self, frame_depth=10, ch=6):
        super().__init__()
        self.frame_depth = frame_depth
        self.bn = nn.BatchNorm2d(3)
        self.conv1 = nn.Conv2d(3, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3)
        self.att = nn.Conv2d(ch, 1, 1)
        self.mask = AttentionMask()
        self.pool = nn.AvgPool2d(2)
        self.fc1 = nn.Linear(ch * 17 * 17, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        x = x[1:] - x[:-1]                                     # torch.diff(x, dim=0), which ONNX cannot export
        x = self.bn(x)
        d1 = torch.tanh(self.conv1(shift(x, self.frame_depth)))
        d2 = torch.tanh(self.conv2(shift(d1, self.frame_depth)))
        g = self.mask(torch.sigmoid(self.att(d2)))
        d3 = self.pool(d2 * g)
        return self.fc2(torch.tanh(self.fc1(d3.flatten(1))))


class EfficientPhysStage3d(nn.Module):
    """The workaround: the same weights as 3-D ops on (1, C, T, H, W), the frames moved to the depth axis first
    (unsqueeze(0), then a permute; kernels (1, k, k)), the shift as slices and a cat; the output (T, 1)."""

    def __init__(self, src):
        super().__init__()
        self.bn = nn.BatchNorm3d(3)
        self.bn.load_state_dict(src.bn.state_dict())
        self.conv1, self.conv2, self.att = (self._c3(src.conv1, 1), self._c3(src.conv2, 0), self._c3(src.att, 0))
        self.pool = nn.AvgPool3d((1, 2, 2))
        self.fc1, self.fc2 = src.fc1, src.fc2

    @staticmethod
    def _c3(conv, pad):
        k = conv.kernel_size[0]
        c3 = nn.Conv3d(conv.in_channels, conv.out_channels, (1, k, k), padding=(0, pad, pad))
        c3.weight.data = conv.weight.data.unsqueeze(2).clone()
        c3.bias.data = conv.bias.data.clone()
        return c3

    def forward(self, x):
        x = x.unsqueeze(0).permute(0, 2, 1, 3, 4)
        x = x[:, :, 1:] - x[:, :, :-1]
        x = self.bn(x)
        d1 = torch.tanh(self.conv1(shift_depth(x)))
        d2 = torch.tanh(self.conv2(shift_depth(d1)))
        g = torch.sigmoid(self.att(d2))
        g = g / g.sum(3, keepdim=True).sum(4, keepdim=True) * g.size(3) * g.size(4) * 0.5
        d3 = self.pool(d2 * g)                                   # (1, C, T, 17, 17)
        t = d3.size(2)
        d3 = d3.permute(0, 2, 1, 3, 4).reshape(1, t, -1)         # (1, T, C*17*17): frames stay off the batch axis
        return self.fc2(torch.tanh(self.fc1(d3))).squeeze(0)


def _stage():
    m = seeded(EfficientPhysStage)
    with torch.no_grad():
        m.bn.running_mean.uniform_(-0.1, 0.1)
        m.bn.running_var.uniform_(0.5, 1.5)
    return m.eval()


def cases():
    x = randn(10, 6, 8, 8)
    yield Case("tsm", TSM(), (x,), **TS)
    v = randn(11, 3, 36, 36, seed=2)
    stage = _stage()
    yield Case("efficientphys-stage", stage, (v,), **TS)
    yield Case("efficientphys-stage-3d", EfficientPhysStage3d(stage).eval(), (v,), trigger=False,
               rewrites="efficientphys-stage", **TS)
    # control: the same shift with the frames on axis 1 of a (1, T, C, H*W) input (no batch axis involved)
    yield Case("frames-axis1-control", Fn(shift_axis1), (randn(1, 10, 6, 64, seed=3),), trigger=False, **TS)


def variants():
    x = randn(10, 6, 8, 8, seed=4)
    yield Case("tsm-seg5", TSM(n_segment=5), (x,), **TS)
    yield Case("tsm-seg2", TSM(n_segment=2), (x,), **TS)
    yield Case("tsm-fold4", TSM(fold_div=4), (randn(10, 8, 8, 8, seed=5),), **TS)
    yield Case("tsm-reshape", TSM(how="reshape"), (x,), **TS)
    yield Case("tsm-zeros", TSM(buffer="zeros"), (x,), **TS)
    yield Case("tsm-seg8-frames8", TSM(n_segment=8), (randn(8, 6, 8, 8, seed=6),), **TS)
    yield Case("conv-tsm-conv", seeded(ConvTSMConv), (randn(10, 3, 8, 8, seed=7),), **TS)
    yield Case("conv-tsm-conv-seg5", seeded(lambda: ConvTSMConv(n_segment=5)), (randn(10, 3, 8, 8, seed=7),), **TS)
    yield Case("view-only", ViewOnly(), (x,), **TS)


