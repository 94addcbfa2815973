"""KB236: a Conv3d whose im2col buffer (Cin * kD*kH*kW * output D*H*W floats) passes 2^31 bytes, on MNN 3.0.0
(alibaba/MNN#2298: a 3-D UNet with a (1, 64, 9, 256, 256) feature map; alibaba/MNN#2203: a 5-D input)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

# im2col bytes = 128 * 5*5*5 * (3 * 106 * W) * 4: W = 106 gives 2,157,312,000 (over 2^31 = 2,147,483,648),
# W = 105 gives 2,136,960,000 (under). The thread's layer, Conv3d(64, ., 3) on 9 x 256 x 256, is 4,076,863,488.
OVER = (1, 128, 3, 106, 106)
UNDER = (1, 128, 3, 106, 105)


def conv(cin=128, cout=1, k=5):
    return seeded(nn.Conv3d, cin, cout, k, padding=k // 2).eval()


class SplitChannels(nn.Module):
    """The workaround: the same convolution as two convolutions over halves of the input channels, added. Each
    im2col buffer is half as large (1,078,656,000 bytes here); the weights are the original layer's."""

    def __init__(self, full: nn.Conv3d):
        super().__init__()
        half = full.in_channels // 2
        self.half = half
        self.a = nn.Conv3d(half, full.out_channels, full.kernel_size, padding=full.padding)
        self.b = nn.Conv3d(full.in_channels - half, full.out_channels, full.kernel_size, padding=full.padding,
                           bias=False)
        with torch.no_grad():
            self.a.weight.copy_(full.weight[:, :half])
            self.a.bias.copy_(full.bias)
            self.b.weight.copy_(full.weight[:, half:])

    def forward(self, x):
        return self.a(x[:, :self.half]) + self.b(x[:, self.half:])


def cases():
    yield Case("conv3d-over-2gib", conv(), (randn(*OVER),), opset=13, dynamo=False, ways=["opset17", "dynamo"])
    yield Case("conv3d-under-2gib", conv(), (randn(*UNDER),), opset=13, dynamo=False, trigger=False)
    yield Case("split-channels", SplitChannels(conv()).eval(), (randn(*OVER),), opset=13, dynamo=False,
               rewrites="conv3d-over-2gib")


def variants():
    # Near miss: a Conv2d whose im2col would be as large (256 * 7*7 * 210*210 * 4 = 2,212,761,600 bytes)
    yield Case("conv2d-same-size-near-miss", seeded(nn.Conv2d, 256, 1, 7, padding=3).eval(),
               (randn(1, 256, 210, 210),), opset=13, dynamo=False)
