"""KB233 (Tencent/ncnn#5969): MobileViT's block unfolds its feature map into patch_area = ph * pw sequences of
patches and runs its transformer on a (patch_area, patches, channels) tensor: a batch of 4 (2x2 patches) made
inside the graph. pnnx before 20261020 writes that tensor as a 3-D ncnn blob and the attention (and Linear)
layers after it as if it were one sequence; ncnn then dies (SIGSEGV; malloc's heap check in the thread) or gives
NaN. The model is MobileViT-v1 (apple/deeplabv3-mobilevit-xx-small) written by hand after transformers'
modeling_mobilevit.py, random weights; TorchScript (pnnx.export's path)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import MobileViTAttention, randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False)


def conv(i, o, k=3, s=1, groups=1, dilation=1, norm=True, act=True):
    """transformers' MobileViTConvLayer: conv (no bias), BatchNorm, SiLU."""
    layers = [nn.Conv2d(i, o, k, s, (k - 1) // 2 * dilation, dilation=dilation, groups=groups, bias=not norm)]
    layers += [nn.BatchNorm2d(o)] if norm else []
    layers += [nn.SiLU()] if act else []
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, i, o, stride, expand=2):
        super().__init__()
        self.res = stride == 1 and i == o
        self.body = nn.Sequential(conv(i, i * expand, 1), conv(i * expand, i * expand, 3, stride, groups=i * expand),
                                  conv(i * expand, o, 1, act=False))

    def forward(self, x):
        return x + self.body(x) if self.res else self.body(x)


class TransformerLayer(nn.Module):
    def __init__(self, dim, heads, mlp=2.0, ffn=True):
        super().__init__()
        self.norm1, self.attention = nn.LayerNorm(dim), MobileViTAttention(dim, heads)
        self.ffn = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, int(dim * mlp)), nn.SiLU(),
                                 nn.Linear(int(dim * mlp), dim)) if ffn else None

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.ffn(x) if self.ffn is not None else x


class MobileViTBlock(nn.Module):
    """transformers' MobileViTLayer without its downsampling: local 3x3 and 1x1 convs, unfold into patches,
    transformer layers and a LayerNorm, fold, 1x1 projection, concatenation with the input and a 3x3 fusion."""

    def __init__(self, channels, dim, depth, heads=4, patch=2, ffn=True):
        super().__init__()
        self.patch = patch
        self.conv_kxk, self.conv_1x1 = conv(channels, channels, 3), conv(channels, dim, 1, norm=False, act=False)
        self.transformer = nn.Sequential(*(TransformerLayer(dim, heads, ffn=ffn) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim)
        self.projection, self.fusion = conv(dim, channels, 1), conv(2 * channels, channels, 3)

    def unfold(self, f):
        p, (b, c, h, w) = self.patch, f.shape
        nh, nw = h // p, w // p
        x = f.reshape(b * c * nh, p, nw, p).transpose(1, 2)
        x = x.reshape(b, c, nh * nw, p * p).transpose(1, 3)
        return x.reshape(b * p * p, nh * nw, -1), (b, c, nh, nw)

    def fold(self, x, info):
        p, (b, c, nh, nw) = self.patch, info
        x = x.contiguous().view(b, p * p, nh * nw, -1).transpose(1, 3)
        f = x.reshape(b * c * nh, nw, p, p).transpose(1, 2)
        return f.reshape(b, c, nh * p, nw * p)

    def forward(self, x):
        patches, info = self.unfold(self.conv_1x1(self.conv_kxk(x)))
        patches = self.norm(self.transformer(patches))
        return self.fusion(torch.cat([x, self.projection(self.fold(patches, info))], 1))


class ASPP(nn.Module):
    """MobileViTASPP: a 1x1 conv, three atrous 3x3 convs (rates 6, 12, 18), image pooling, projection."""

    def __init__(self, i, o=256, rates=(6, 12, 18)):
        super().__init__()
        relu = dict(act=False)
        self.branches = nn.ModuleList([nn.Sequential(conv(i, o, 1, **relu), nn.ReLU())] + [
            nn.Sequential(conv(i, o, 3, dilation=r, **relu), nn.ReLU()) for r in rates])
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), conv(i, o, 1, **relu), nn.ReLU())
        self.project = nn.Sequential(conv(5 * o, o, 1, **relu), nn.ReLU())

    def forward(self, x):
        pooled = F.interpolate(self.pool(x), size=x.shape[-2:], mode="bilinear", align_corners=False)
        return self.project(torch.cat([b(x) for b in self.branches] + [pooled], 1))


class DeepLabV3MobileViT(nn.Module):
    """apple/deeplabv3-mobilevit-xx-small's shape: MobileViT-v1 xx-small (neck 16, 16, 24, 48, 64, 80, 320; transformer
    widths 64, 80, 96 with 2, 4, 3 layers; output stride 16), the ASPP head and a 21-class 1x1 classifier; returns
    the logits, as the thread's wrapper does."""

    def __init__(self, labels=21):
        super().__init__()
        self.backbone = nn.Sequential(
            conv(3, 16, 3, 2), InvertedResidual(16, 16, 1),
            InvertedResidual(16, 24, 2), InvertedResidual(24, 24, 1), InvertedResidual(24, 24, 1),
            InvertedResidual(24, 48, 2), MobileViTBlock(48, 64, 2),
            InvertedResidual(48, 64, 2), MobileViTBlock(64, 80, 4),
            InvertedResidual(64, 80, 1), MobileViTBlock(80, 96, 3),  # output stride 16: the last stage dilated
            conv(80, 320, 1))
        self.head = nn.Sequential(ASPP(320), nn.Conv2d(256, labels, 1))

    def forward(self, x):
        return self.head(self.backbone(x))


def block(channels=32, dim=64, depth=2, **kw):
    return nn.Sequential(MobileViTBlock(channels, dim, depth, **kw)).eval()


def cases():
    x = randn(1, 32, 16, 16)
    # 2x2 patches: the transformer runs on a (4, 64, 64) tensor, a batch of 4 made inside the graph
    yield Case("mobilevit-block", seeded(block), (x,), torchscript=True, **IO)
    # Control: 1x1 patches, the same layers on a (1, 256, 64) tensor
    yield Case("patch-one", seeded(block, patch=1), (x,), trigger=False, torchscript=True, **IO)


def variants():
    x = randn(1, 32, 16, 16)
    yield Case("deeplabv3-mobilevit-xx-small", seeded(lambda: DeepLabV3MobileViT().eval()), (randn(1, 3, 64, 64),),
               torchscript=True, **IO)
    yield Case("one-layer", seeded(block, depth=1), (x,), torchscript=True, **IO)
    yield Case("attention-only", seeded(block, depth=1, ffn=False), (x,), torchscript=True, **IO)
    yield Case("one-head", seeded(block, heads=1), (x,), torchscript=True, **IO)
    yield Case("width-96", seeded(block, 80, 96, 3), (randn(1, 80, 16, 16),), torchscript=True, **IO)
    yield Case("larger-map", seeded(block), (randn(1, 32, 32, 32),), torchscript=True, **IO)
    yield Case("patch-4x4", seeded(block, patch=4), (x,), torchscript=True, **IO)
    yield Case("mobilevit-block-onnx", seeded(block), (x,), **IO)
    yield Case("patch-one-near-miss", seeded(block, patch=1, depth=1), (x,), trigger=False, torchscript=True, **IO)
