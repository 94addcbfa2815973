"""KB077: MNN's CPU backend with precision low on an ARMv8.2 CPU (fp16 arithmetic) computes in fp16, so an intermediate
value past 65504 (fp16's largest finite number) becomes inf, then NaN or 0 downstream. The same .mnn is right with
precision normal, on an ARMv8.0 CPU and on x86. Every weight here is small (|w| < 1): the overflow is in activations."""

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
    # A long sum (16384 values in [0, 1), about 8200): past fp16's 2048 where its spacing is 2, but MNN's sum is
    # right to 1e-3 here.
    yield Case("long-sum", LongSum(), (torch.rand(1, 4, 16384, generator=torch.Generator().manual_seed(0)),),
               ["in0"], ["out0"], opset=17, dynamo=False)
