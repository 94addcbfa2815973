"""KB077: MNN's CPU backend with precision low on an ARMv8.2 CPU (fp16 arithmetic) computes in fp16, so an intermediate
value past 65504 (fp16's largest finite number) becomes inf, then NaN or 0 downstream. The same .mnn is right with
precision normal, on an ARMv8.0 CPU and on x86. Every weight here is small (|w| < 1): the overflow is in activations."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import (
    ONE_FILE,
    AttentionScores,
    L2Norm,
    L2NormRescaled,
    LinalgNorm,
    RMSNorm,
    ScaledSoftmax,
    ViTBlock,
    features,
    residual_stream,
    seeded,
)
from kb.export import Case


class Normalize(nn.Module):
    """F.normalize: x / max(||x||, eps), the embedding normalization of face and image retrieval models."""

    def forward(self, x):
        return F.normalize(x, dim=-1)


class Std(nn.Module):
    def forward(self, x):
        return x.std(-1, keepdim=True)


class ManualLayerNorm(nn.Module):
    """LayerNorm written out (mean, variance, divide), as older code and some exported models have it."""

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) * (x - m)).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5)


class LongSum(nn.Module):
    def forward(self, x):
        return x.sum(-1, keepdim=True)


class LayerNorm(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x)


class FourierUnit(nn.Module):
    """LaMa's Fourier unit (FFC's global branch: a 2D DFT, a 1x1 conv + BN + ReLU on the real and imaginary parts,
    the inverse DFT), with the DFT written as matmuls by cos/sin matrices, a form mnnconvert takes (it has no rule
    for ONNX's DFT). `ortho_in_matrices`: the 1/sqrt(n) scale is folded into the matrices, so no sum grows past the
    input's scale times sqrt(h * w); otherwise the sums are formed first and divided by sqrt(h * w) after."""

    def __init__(self, c=8, h=32, w=32, ortho_in_matrices=False):
        super().__init__()
        self.fold, self.hw = ortho_in_matrices, h * w
        for side, n in (("h", h), ("w", w)):
            k = torch.arange(n, dtype=torch.float64)
            angle = 2 * math.pi * torch.outer(k, k) / n
            scale = 1 / math.sqrt(n) if ortho_in_matrices else 1.0
            self.register_buffer(f"c{side}", (torch.cos(angle) * scale).float())
            self.register_buffer(f"s{side}", (-torch.sin(angle) * scale).float())
        self.conv = nn.Conv2d(2 * c, 2 * c, 1, bias=False)
        self.bn = nn.BatchNorm2d(2 * c)

    def forward(self, x):
        xr, xi = x @ self.cw, x @ self.sw
        re, im = self.ch @ xr - self.sh @ xi, self.ch @ xi + self.sh @ xr
        if not self.fold:
            re, im = re / math.sqrt(self.hw), im / math.sqrt(self.hw)
        re, im = torch.relu(self.bn(self.conv(torch.cat((re, im), 1)))).chunk(2, 1)
        yr, yi = self.ch @ re + self.sh @ im, self.ch @ im - self.sh @ re
        y = yr @ self.cw + yi @ self.sw
        return y if self.fold else y / math.sqrt(self.hw)


def feature_map(high, c=8, h=32, w=32):
    """A post-ReLU feature map of values in [0, high)."""
    return (torch.rand(1, c, h, w, generator=torch.Generator().manual_seed(1)) * high,)


def cases():
    # Features of about 100: x * x reaches 1e5 and the sums of squares 5.9e5 to 7.8e5; the result is at most 940.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    # The rescale workaround: the same input, judged against l2-norm's torch output.
    yield Case("l2-norm-rescaled", L2NormRescaled(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               trigger=False, rewrites="l2-norm")
    # Control: features of about 10, every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False, trigger=False)
    # Logits of about 1e5 (a logit scale of 1e5 on outputs of about 1).
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # LaMa's Fourier unit over values in [0, 160): the same model as the variant of that name.
    yield Case("fourier-unit", seeded(FourierUnit).eval(), feature_map(160.0), ["in0"], ["out0"], opset=17,
               dynamo=False)


def variants():
    # All converted by kb's mnnconvert driver on x86 and run with the Module API on an emulated cortex-a76,
    # precision low.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("l2-norm-opset13", L2Norm(), features(100.0), ["in0"], ["out0"], opset=13, dynamo=False)
    yield Case("l2-norm-dynamo", L2Norm(), features(100.0), ["in0"], ["out0"], opset=18, dynamo=True,
               export_kwargs=ONE_FILE)
    yield Case("l2-norm-onnxsim", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               simplify=True)
    yield Case("linalg-norm", LinalgNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("normalize", Normalize(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("std", Std(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    # LayerNorm written out, over a stream with one channel of 3e4: its variance (about 2.8e7) is past 65504.
    yield Case("manual-layernorm", ManualLayerNorm(), residual_stream(3e4), ["in0"], ["out0"], opset=17,
               dynamo=False)
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False)
    yield Case("softmax-logits-dynamo", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=18,
               dynamo=True, export_kwargs=ONE_FILE)
    yield Case("softmax-logits-onnxsim", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, simplify=True)
    # q @ k^T of features of about 40 over 64 channels: the diagonal reaches 1e5 before the division by 8.
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("attention-scores-dynamo", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=18,
               dynamo=True)
    # Not affected on MNN 3.6.1 although their values are as large: mnnconvert turns these into MNN's own
    # LayerNorm op (nn.LayerNorm, and RMSNorm's pattern), which the page reports as measured.
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("layernorm-massive", LayerNorm(), residual_stream(3e4), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("layernorm-massive-opset13", LayerNorm(), residual_stream(3e4), ["in0"], ["out0"], opset=13,
               dynamo=False)
    # A ViT block whose residual stream carries one channel of 1e5 (a "massive activation").
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # Near misses: the same models with every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("rmsnorm-small", RMSNorm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("layernorm-in-range", LayerNorm(), residual_stream(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("softmax-small-logits", ScaledSoftmax(10.0), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False)
    yield Case("attention-scores-small", AttentionScores(), features(1.0), ["in0"], ["out0"], opset=17,
               dynamo=False)
    yield Case("vit-block-in-range", ViTBlock().eval(), residual_stream(100.0), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # LaMa's Fourier unit, the DFT as matmuls, over a 32x32 map of values in [0, 160) (mean about 80): the DFT's
    # zero-frequency sums reach about 8.2e4 before the division by 32. With the 1/sqrt(n) folded into the matrices
    # (fourier-unit-ortho) no sum passes about 2600; over values in [0, 40) (fourier-unit-small) none passes 2.1e4.
    yield Case("fourier-unit", seeded(FourierUnit).eval(), feature_map(160.0), ["in0"], ["out0"], opset=17,
               dynamo=False)
    yield Case("fourier-unit-ortho", seeded(FourierUnit, ortho_in_matrices=True).eval(), feature_map(160.0), ["in0"],
               ["out0"], opset=17, dynamo=False)
    yield Case("fourier-unit-small", seeded(FourierUnit).eval(), feature_map(40.0), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # A long sum (16384 values in [0, 1), about 8200): past fp16's 2048 where its spacing is 2, but MNN's sum is
    # right to 1e-3 here.
    yield Case("long-sum", LongSum(), (torch.rand(1, 4, 16384, generator=torch.Generator().manual_seed(0)),),
               ["in0"], ["out0"], opset=17, dynamo=False)
