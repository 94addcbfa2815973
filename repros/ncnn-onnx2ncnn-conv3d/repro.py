"""KB208: an ONNX Conv with a 3-D kernel (torch nn.Conv3d). onnx2ncnn has no 3-D convolution: it writes a 2-D
Convolution with no kernel size and no word of warning, and ncnn cannot run it (SIGFPE on old releases,
'layer load_param failed' on 1.0.20261020). pnnx writes ncnn's Convolution3D."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Conv3dBlock(nn.Module):
    """Conv3d then ReLU; kernel, padding and groups as given."""

    def __init__(self, cin=3, cout=8, k=3, padding=1, groups=1, bn=False, pool=False):
        super().__init__()
        layers = [nn.Conv3d(cin, cout, k, padding=padding, groups=groups)]
        if bn:
            layers.append(nn.BatchNorm3d(cout))
        layers.append(nn.ReLU())
        if pool:
            layers.append(nn.MaxPool3d((1, 2, 2)))
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


class Conv2dBlock(nn.Module):
    """Control: the 2-D convolution onnx2ncnn converts."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return self.conv(x).relu()


def clip():
    return randn(1, 3, 4, 8, 8)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    yield Case("conv3d", seeded(Conv3dBlock), (clip(),), opset=11, dynamo=False, torchscript=True, ways=True, **IO)
    # Control: a Conv2d, the same channels, through onnx2ncnn.
    yield Case("conv2d", seeded(Conv2dBlock), (randn(1, 3, 8, 8),), opset=11, dynamo=False, trigger=False, **IO)


def variants():
    yield Case("kernel-1x3x3", seeded(Conv3dBlock, k=(1, 3, 3), padding=(0, 1, 1)), (clip(),), opset=11,
               dynamo=False, **IO)
    yield Case("kernel-3x1x1", seeded(Conv3dBlock, k=(3, 1, 1), padding=(1, 0, 0)), (clip(),), opset=11,
               dynamo=False, **IO)
    yield Case("pointwise", seeded(Conv3dBlock, k=1, padding=0), (clip(),), opset=13, dynamo=False, **IO)
    yield Case("depthwise", seeded(Conv3dBlock, cin=4, cout=4, groups=4), (randn(1, 4, 4, 8, 8),), opset=13,
               dynamo=False, **IO)
    yield Case("bn-relu-onnxsim", seeded(Conv3dBlock, bn=True), (clip(),), opset=11, dynamo=False, simplify=True,
               **IO)
    # Near miss: the same block as a Conv2d.
    yield Case("conv2d-near-miss", seeded(Conv2dBlock), (randn(1, 3, 8, 8),), opset=13, dynamo=False, **IO)
