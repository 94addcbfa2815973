"""KB076: on ncnn's ARM CPU path, where the CPU has fp16 arithmetic (ARMv8.2 and newer: asimdhp), ncnn stores and
computes activations in fp16 by default, so an intermediate value past 65504 (fp16's largest finite number) becomes
inf, and NaN (or 0) after the next layer. The same .param/.bin is right on ARMv8.0 and on x86. Every weight here is
small (|w| < 1): this is about activations, not KB056's weights past 65504. The models are KB075's (the same
mechanism on the Vulkan GPU)."""

import torch
from torch import nn

from kb.export import Case

SCALE = 256.0  # the rescale workaround: a power of two, so dividing and multiplying back are exact
ONE_FILE = {"external_data": False}  # torch 2.13's dynamo exporter otherwise writes the weights beside the model


class L2Norm(nn.Module):
    """The length of each feature vector, as sqrt(sum(x * x)): with features of about 100, x * x and the sum
    pass 65504 while the result (under 1000) is an ordinary number."""

    def forward(self, x):
        return torch.sqrt((x * x).sum(-1, keepdim=True))


class L2NormRescaled(nn.Module):
    """The same function, with the features divided by SCALE first and the length multiplied back: the squares
    stay under 65504."""

    def forward(self, x):
        y = x / SCALE
        return torch.sqrt((y * y).sum(-1, keepdim=True)) * SCALE


class LinalgNorm(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x, dim=-1, keepdim=True)


class RMSNorm(nn.Module):
    """LLaMA-style RMSNorm: x / sqrt(mean(x * x) + eps) * weight."""

    def __init__(self, d=64):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * self.weight


class ScaledSoftmax(nn.Module):
    """A classifier head with a logit scale (an inverse temperature): softmax(fc(x) * scale)."""

    def __init__(self, scale):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 16)
        self.scale = scale

    def forward(self, x):
        return torch.softmax(self.fc(x) * self.scale, -1)


class AttentionScores(nn.Module):
    """softmax(q @ k^T / sqrt(d)) with q = k = the features (a non-local / self-similarity block): the product is
    formed before it is scaled down."""

    def forward(self, x):
        return torch.softmax(x @ x.transpose(-1, -2) / 8.0, -1)


class ViTBlock(nn.Module):
    """A pre-norm transformer block (attention and MLP, each with a residual) and the final LayerNorm, as a ViT
    ends. Every weight is nn.Linear's default (|w| < 0.25)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        torch.manual_seed(0)
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.ln2(x))
        return self.norm(x)


def features(scale, n=8, d=64, seed=1):
    torch.manual_seed(seed)
    return (torch.randn(1, n, d) * scale,)


def residual_stream(massive, n=8, d=32):
    """A residual stream with one "massive activation" channel (as LLMs and large ViTs have): the rest is N(0, 1)."""
    torch.manual_seed(1)
    x = torch.randn(1, n, d)
    x[..., 3] = massive
    return (x,)


def cases():
    # Features of about 100: x * x reaches 1e5 and the sum over 64 of them 7.8e5; the result is under 1000.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # The rescale workaround: the same input, judged against l2-norm's torch output.
    yield Case("l2-norm-rescaled", L2NormRescaled(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False, rewrites="l2-norm")
    # Control: features of about 10, every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False)
    # Logits of about 1e5 (a logit scale of 1e5 on outputs of about 1).
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    # q @ k^T of features of about 40 over 64 channels: the diagonal reaches 1e5 before the division by 8.
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)


def variants():
    # Names ending in -opset13 / -opset17 / -dynamo / -onnxsim are converted by pnnx from the ONNX export, names
    # ending in -onnx2ncnn by onnx2ncnn, the rest by pnnx from TorchScript. All run on an emulated Cortex-A76.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("linalg-norm", LinalgNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # (Not the L2 norm from ONNX: its ReduceSum takes the axes as an input, which pnnx drops, KB022.)
    yield Case("rmsnorm-opset17", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("softmax-logits-dynamo", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=18,
               dynamo=True, export_kwargs=ONE_FILE)
    yield Case("softmax-logits-onnxsim", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, simplify=True)
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("attention-scores-dynamo", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=18,
               dynamo=True)
    # A ViT block whose residual stream carries one channel of 1e5.
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("vit-block-massive-opset17", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # The same models through onnx2ncnn (opset 11: ReduceSum's axes are still an attribute there).
    yield Case("l2-norm-onnx2ncnn", L2Norm(), features(100.0), ["in0"], ["out0"], opset=11, dynamo=False)
    yield Case("softmax-logits-onnx2ncnn", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=11,
               dynamo=False)
    yield Case("attention-scores-onnx2ncnn", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=11,
               dynamo=False)
    # Near misses: the same models with every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("rmsnorm-small", RMSNorm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("softmax-small-logits", ScaledSoftmax(10.0), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("attention-scores-small", AttentionScores(), features(1.0), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("vit-block-in-range", ViTBlock().eval(), residual_stream(3e4), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("l2-norm-small-onnx2ncnn", L2Norm(), features(10.0), ["in0"], ["out0"], opset=11, dynamo=False)
