"""KB116: MNN 3.1.0 and later compute a 3-D ConvTranspose (nn.ConvTranspose3d) wrong; 3.0.0 is exact."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class ZeroInsertConv3d(nn.Module):
    """The workaround: the same ConvTranspose3d as zeros inserted between the inputs, then a Conv3d whose
    weight is the deconvolution's, flipped and with in/out channels swapped (groups=1, padding 0)."""

    def __init__(self, deconv):
        super().__init__()
        self.k, self.s, self.bias = deconv.kernel_size[0], deconv.stride[0], deconv.bias
        self.weight = nn.Parameter(deconv.weight.detach().flip(2, 3, 4).transpose(0, 1).contiguous())

    def forward(self, x):
        s, k = self.s, self.k
        for axis in (2, 3, 4) if s > 1 else ():  # s - 1 zeros after each input along each spatial axis
            keep = torch.zeros(s).index_fill(0, torch.tensor(0), 1.0).view(s, *[1] * (4 - axis))
            x = (x.unsqueeze(axis + 1) * keep).flatten(axis, axis + 1)
            x = x.narrow(axis, 0, x.shape[axis] - (s - 1))
        return nn.functional.conv3d(x, self.weight, self.bias, padding=k - 1)


def cases():
    x = randn(1, 2, 3, 4, 5)
    deconv = seeded(nn.ConvTranspose3d, 2, 2, 3, stride=2)
    yield Case("deconv3d", deconv, (x,), opset=17, dynamo=False, ways=True)
    yield Case("zero-insert-conv3d", ZeroInsertConv3d(deconv), (x,), opset=17,
               dynamo=False, rewrites="deconv3d", trigger=False)


def variants():
    yield Case("deconv3d-stride1", seeded(nn.ConvTranspose3d, 2, 2, 3), (randn(1, 2, 3, 4, 5),), opset=17, dynamo=False)
    yield Case("deconv3d-pad-c8", seeded(nn.ConvTranspose3d, 8, 4, 4, stride=2, padding=1), (randn(1, 8, 4, 6, 6),),
               opset=17, dynamo=False)
    yield Case("deconv3d-one-channel", seeded(nn.ConvTranspose3d, 1, 2, 3), (randn(1, 1, 3, 4, 5),), opset=17,
               dynamo=False)  # onnx's test_convtranspose_3d
    yield Case("deconv2d", seeded(nn.ConvTranspose2d, 2, 2, 3, stride=2), (randn(1, 2, 4, 5),), opset=17, dynamo=False)
    yield Case("conv3d", seeded(nn.Conv3d, 2, 2, 3), (randn(1, 2, 5, 6, 7),), opset=17, dynamo=False)
