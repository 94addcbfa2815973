"""Classic CNNs: ResNet (with and without in-model input normalization), MobileNetV2, a YOLO-style neck."""

from __future__ import annotations

import torch
from torch import nn

from .base import Model, _perturb_norms


# --------------------------------------------------------------------------------------------------
# ResNet (torchvision resnet.BasicBlock), with and without in-model input normalization
# --------------------------------------------------------------------------------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision ResNet-18 layout (stem conv7/2 + BN + ReLU + maxpool, BasicBlocks, avgpool, fc),
    two stages of two blocks. `normalize`: the ImageNet mean/std applied inside the model, as many
    exported apps do, so the first op on the input is a Sub, not the Conv."""

    def __init__(self, widths=(16, 32), classes: int = 10, normalize: bool = False):
        super().__init__()
        self.normalize = normalize
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            layers.append(nn.Sequential(BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w)))
            cin = w
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        if self.normalize:
            x = (x - self.mean) / self.std
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet() -> Model:
    return Model(_perturb_norms(ResNet()), (torch.randn(1, 3, 64, 64),), ["input"], ["logits"])


def resnet_preproc() -> Model:
    return Model(_perturb_norms(ResNet(normalize=True)), (torch.rand(1, 3, 64, 64),), ["image"], ["logits"])


# --------------------------------------------------------------------------------------------------
# MobileNetV2 (torchvision mobilenetv2.InvertedResidual): depthwise conv, ReLU6 (Clip)
# --------------------------------------------------------------------------------------------------


def _conv_bn_relu6(cin, cout, k=3, s=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [] if expand == 1 else [_conv_bn_relu6(cin, hidden, 1)]
        layers += [_conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2)]  # t, c, n, s
        layers, cin = [_conv_bn_relu6(3, 16, 3, 2)], 16
        for t, c, n, s in cfg:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(_conv_bn_relu6(cin, 64, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


def mobilenetv2() -> Model:
    return Model(_perturb_norms(MobileNetV2()), (torch.randn(1, 3, 64, 64),), ["input"], ["logits"])


# --------------------------------------------------------------------------------------------------
# YOLO-style detector neck (YOLOv5/v8: Conv+BN+SiLU, C3/C2f-ish bottlenecks, nearest upsample, concat)
# --------------------------------------------------------------------------------------------------


class ConvBnSiLU(nn.Module):
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class C3(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        h = cout // 2
        self.cv1, self.cv2, self.cv3 = ConvBnSiLU(cin, h), ConvBnSiLU(cin, h), ConvBnSiLU(2 * h, cout)
        self.m = nn.Sequential(ConvBnSiLU(h, h, 1), ConvBnSiLU(h, h, 3))

    def forward(self, x):
        a = self.cv1(x)
        return self.cv3(torch.cat([a + self.m(a), self.cv2(x)], 1))


class YoloSmall(nn.Module):
    """Backbone to stride 8 and 16, an FPN step (Upsample x2 + Concat) and two 1x1 detect heads."""

    def __init__(self, outs=3 * 9):
        super().__init__()
        self.stem = ConvBnSiLU(3, 16, 3, 2)
        self.b1 = nn.Sequential(ConvBnSiLU(16, 32, 3, 2), C3(32, 32))
        self.b2 = nn.Sequential(ConvBnSiLU(32, 64, 3, 2), C3(64, 64))
        self.b3 = nn.Sequential(ConvBnSiLU(64, 64, 3, 2), C3(64, 64))
        self.lat = ConvBnSiLU(64, 32)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = C3(64 + 32, 64)
        self.head_p3 = nn.Conv2d(64, outs, 1)
        self.head_p4 = nn.Conv2d(64, outs, 1)

    def forward(self, x):
        p3 = self.b2(self.b1(self.stem(x)))
        p4 = self.b3(p3)
        f = self.fuse(torch.cat([self.up(self.lat(p4)), p3], 1))
        return self.head_p3(f), self.head_p4(p4)


def yolo() -> Model:
    return Model(_perturb_norms(YoloSmall()), (torch.randn(1, 3, 64, 64),), ["images"], ["p3", "p4"])
