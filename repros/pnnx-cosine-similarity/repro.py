"""KB204: F.cosine_similarity / nn.CosineSimilarity traced and converted by pnnx. pnnx has no rule for
aten::cosine_similarity: it writes the op through under its aten name, with its dim and eps as two constant
pnnx.Expression layers ahead of it, and ncnn stops at the first of those: "layer pnnx.Expression not exists or
registered". The same similarity written out (dot product over the product of the norms) converts."""

import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Fn2(nn.Module):
    """One function of two inputs as a module, no weights."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)


def written_out(a, b, dim=1, eps=1e-8):
    """cosine similarity as sums and norms: a Reduction, UnaryOp sqrt, Clip and BinaryOp in ncnn."""
    return (a * b).sum(dim) / (a.norm(dim=dim) * b.norm(dim=dim)).clamp(min=eps)


class Siamese(nn.Module):
    """Two inputs embedded by one shared Linear, then compared (a verification or matching head)."""

    def __init__(self, how="cosine"):
        super().__init__()
        self.fc, self.how = nn.Linear(32, 16), how

    def forward(self, a, b):
        ea, eb = self.fc(a), self.fc(b)
        if self.how == "written":
            return written_out(ea, eb)
        return F.cosine_similarity(ea, eb)


class ConvMaps(nn.Module):
    """A conv, then the per-pixel cosine similarity of its map with a template map (a correlation head)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x, t):
        return F.cosine_similarity(self.conv(x), t, dim=1)


IO2 = dict(input_names=["in0", "in1"], output_names=["out0"], torchscript=True)


def cases():
    a, b = randn(1, 8, 6, 10), randn(1, 8, 6, 10, seed=2)
    yield Case("cosine-maps", Fn2(lambda a, b: F.cosine_similarity(a, b, dim=1)), (a, b), opset=17, dynamo=False,
               **IO2)
    # Workarounds, judged against cosine-maps' torch output: the similarity written out, through TorchScript; the
    # original from an opset-11 ONNX export (from opset 13 on, ReduceSum's axes input is KB022's failure).
    yield Case("written-out", Fn2(written_out), (a, b), opset=17, dynamo=False, trigger=False, rewrites="cosine-maps",
               **IO2)
    yield Case("cosine-maps-opset11", Fn2(lambda a, b: F.cosine_similarity(a, b, dim=1)), (a, b), opset=11,
               dynamo=False, trigger=False, rewrites="cosine-maps", input_names=["in0", "in1"],
               output_names=["out0"])


def variants():
    a, b = randn(1, 8, 6, 10, seed=3), randn(1, 8, 6, 10, seed=4)
    e1, e2 = randn(1, 64, seed=5), randn(1, 64, seed=6)
    t1, t2 = randn(1, 12, 16, seed=7), randn(1, 12, 16, seed=8)
    s1, s2 = randn(1, 32, seed=9), randn(1, 32, seed=10)
    yield Case("module", seeded(nn.CosineSimilarity, dim=1), (a, b), opset=17, dynamo=False, **IO2)
    yield Case("embeddings", Fn2(lambda a, b: F.cosine_similarity(a, b)), (e1, e2), opset=17, dynamo=False, **IO2)
    yield Case("tokens-last-dim", Fn2(lambda a, b: F.cosine_similarity(a, b, dim=-1)), (t1, t2), opset=17,
               dynamo=False, **IO2)
    yield Case("eps-1e-6", Fn2(lambda a, b: F.cosine_similarity(a, b, dim=1, eps=1e-6)), (a, b), opset=17,
               dynamo=False, **IO2)
    yield Case("siamese-linear", seeded(Siamese), (s1, s2), opset=17, dynamo=False, **IO2)
    yield Case("conv-template", seeded(ConvMaps), (a, b), opset=17, dynamo=False, **IO2)
    yield Case("one-minus-loss-style", Fn2(lambda a, b: 1 - F.cosine_similarity(a, b, dim=1)), (a, b), opset=17,
               dynamo=False, **IO2)
    # near misses: the similarity written out, and a plain dot product
    yield Case("written-out-near-miss", Fn2(written_out), (a, b), opset=17, dynamo=False, **IO2)
    yield Case("siamese-written-near-miss", seeded(Siamese, "written"), (s1, s2), opset=17, dynamo=False, **IO2)
    yield Case("dot-near-miss", Fn2(lambda a, b: (a * b).sum(1)), (a, b), opset=17, dynamo=False, **IO2)
