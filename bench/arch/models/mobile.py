"""Mobile CNNs: EfficientNet-B0, MobileNetV3-Small, ShuffleNetV2.
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _trained_like


# --------------------------------------------------------------------------------------------------
# EfficientNet-B0 (torchvision efficientnet.MBConv): SiLU, depthwise 3x3/5x5, squeeze-excitation
# (avgpool -> 1x1 conv -> SiLU -> 1x1 conv -> Sigmoid -> scale); stochastic depth is identity in eval
# --------------------------------------------------------------------------------------------------


def _conv_bn_act(cin, cout, k=3, s=1, groups=1, act=nn.SiLU):
    layers = [nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, act(inplace=True)) if act is not None else nn.Sequential(*layers)


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation: adaptive_avg_pool2d(1), fc1/fc2 as 1x1 convs."""

    def __init__(self, c, squeeze, activation=nn.SiLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, squeeze, 1), nn.Conv2d(squeeze, c, 1)
        self.activation, self.scale_activation = activation(), scale_activation()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.scale_activation(self.fc2(self.activation(self.fc1(s))))


class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [] if expand == 1 else [_conv_bn_act(cin, hidden, 1)]
        layers += [_conv_bn_act(hidden, hidden, k, stride, groups=hidden),
                   SqueezeExcitation(hidden, max(1, cin // 4)),
                   _conv_bn_act(hidden, cout, 1, act=None)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        return out + x if self.use_res else out


class EfficientNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        cfg = [(1, 3, 1, 8, 1), (6, 3, 2, 16, 2), (6, 5, 2, 24, 2)]  # expand, kernel, stride, out, repeats
        layers, cin = [_conv_bn_act(3, 16, 3, 2)], 16
        for t, k, s, c, n in cfg:
            for i in range(n):
                layers.append(MBConv(cin, c, k, s if i == 0 else 1, t))
                cin = c
        layers.append(_conv_bn_act(cin, 64, 1))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def efficientnet_b0() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(EfficientNet(), x), (x,), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# MobileNetV3-Small (torchvision mobilenetv3.InvertedResidual): Hardswish, SE with ReLU + Hardsigmoid
# --------------------------------------------------------------------------------------------------


def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class InvertedResidualV3(nn.Module):
    def __init__(self, cin, k, hidden, cout, se, hs, stride):
        super().__init__()
        act = nn.Hardswish if hs else nn.ReLU
        self.use_res = stride == 1 and cin == cout
        layers = [] if hidden == cin else [_conv_bn_act(cin, hidden, 1, act=act)]
        layers.append(_conv_bn_act(hidden, hidden, k, stride, groups=hidden, act=act))
        if se:
            layers.append(SqueezeExcitation(hidden, _make_divisible(hidden // 4), nn.ReLU, nn.Hardsigmoid))
        layers.append(_conv_bn_act(hidden, cout, 1, act=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        return out + x if self.use_res else out


class MobileNetV3(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        cfg = [(16, 3, 16, 16, True, False, 2), (16, 3, 72, 24, False, False, 2), (24, 3, 88, 24, False, False, 1),
               (24, 5, 96, 40, True, True, 2), (40, 5, 120, 40, True, True, 1)]  # in, k, exp, out, SE, HS, s
        layers = [_conv_bn_act(3, 16, 3, 2, act=nn.Hardswish)]
        layers += [InvertedResidualV3(*c) for c in cfg]
        layers.append(_conv_bn_act(40, 96, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(96, 128), nn.Hardswish(inplace=True), nn.Dropout(0.2),
                                        nn.Linear(128, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def mobilenetv3() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(MobileNetV3(), x), (x,), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# ShuffleNetV2 (torchvision shufflenetv2): channel split (chunk), channel shuffle (view/transpose/view)
# --------------------------------------------------------------------------------------------------


def channel_shuffle(x, groups: int):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        bf = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                nn.Conv2d(cin, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(cin if stride > 1 else bf, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True),
            nn.Conv2d(bf, bf, 3, stride, 1, groups=bf, bias=False), nn.BatchNorm2d(bf),
            nn.Conv2d(bf, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages=(2, 2), widths=(24, 48, 96, 128), classes=10):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                   nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        blocks, cin = [], widths[0]
        for n, cout in zip(stages, widths[1:]):
            blocks.append(nn.Sequential(ShuffleUnit(cin, cout, 2), *[ShuffleUnit(cout, cout, 1) for _ in range(n - 1)]))
            cin = cout
        self.stages = nn.Sequential(*blocks)
        self.conv5 = nn.Sequential(nn.Conv2d(cin, widths[-1], 1, bias=False), nn.BatchNorm2d(widths[-1]),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, x):
        x = self.conv5(self.stages(self.maxpool(self.conv1(x))))
        return self.fc(x.mean([2, 3]))


def shufflenetv2() -> Model:
    x = torch.randn(1, 3, 64, 64)
    return Model(_trained_like(ShuffleNetV2(), x), (x,), ["input"], ["logits"])
