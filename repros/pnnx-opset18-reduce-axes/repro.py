"""KB022: pnnx from ONNX drops the axes of Reduce ops that take them as an input (ReduceMean/L2/Max... from opset 18)."""

import torch
from torch import nn

from kb.export import Case

SHAPE = (1, 8, 6, 10)


class Reduce(nn.Module):
    """One reduction over the channel axis, as norms, pooling heads and attention use them."""

    def __init__(self, op, dim=1, keepdim=True, pre=False):
        super().__init__()
        self.op, self.dim, self.keepdim, self.pre = op, dim, keepdim, pre

    def forward(self, x):
        if self.pre:  # an ordinary op in between, as in a real block
            x = torch.relu(x) + 0.1
        d, k = self.dim, self.keepdim
        if self.op == "sum":
            return x.sum(dim=d, keepdim=k)
        if self.op == "mean":
            return x.mean(dim=d, keepdim=k)
        if self.op == "norm":
            return torch.linalg.vector_norm(x, ord=2, dim=d, keepdim=k)
        if self.op == "amax":
            return x.amax(dim=d, keepdim=k)
        if self.op == "amin":
            return x.amin(dim=d, keepdim=k)
        if self.op == "normalize":  # F.normalize: x / max(||x||, eps)
            return nn.functional.normalize(x, dim=d)
        if self.op == "softmax":  # near miss: no Reduce op at all
            return torch.softmax(x, dim=d)
        raise ValueError(self.op)


class LinearAttention(nn.Module):
    """LoFTR's LinearAttention (zju3dv/LoFTR, kornia.feature.loftr) as self-attention on x (batch, length, heads,
    head dim): Q = K = elu(x) + 1, V = x, without the projections and masks. LoFTR writes its three contractions
    with torch.einsum; here they are the same contractions as permutes and matmuls, because pnnx's ONNX front end
    before 20250530 does not convert an Einsum at all (pnnx-onnx-einsum, KB146). So the one trigger left is
    K.sum(dim=1): a ReduceSum whose axes are a constant input, as torch exports it from opset 13 on."""

    def __init__(self, length):
        super().__init__()
        self.length = length  # LoFTR's v_length = values.size(1), a constant here (no Shape op)

    def forward(self, x):
        q = nn.functional.elu(x) + 1
        k = q
        v = x / self.length  # LoFTR: values / v_length, against fp16 overflow
        kv = k.permute(0, 2, 3, 1) @ v.permute(0, 2, 1, 3)  # einsum("nshd,nshv->nhdv", K, values)
        qh = q.permute(0, 2, 1, 3)  # n, h, l, d
        z = 1 / (qh @ k.sum(dim=1).unsqueeze(-1) + 1e-6)  # einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)), as n, h, l, 1
        out = (qh @ kv) * z * self.length  # einsum("nlhd,nhdv,nlh->nlhv", Q, KV, Z) * v_length, as n, h, l, v
        return out.permute(0, 2, 1, 3)


def case(name, model, opset=18, dynamo=False, shape=SHAPE, **kw):
    torch.manual_seed(0)
    return Case(name, model, (torch.randn(*shape),), ["in0"], ["out0"], opset=opset, dynamo=dynamo,
                torchscript=True, **kw)


def cases():
    yield case("mean-opset18", Reduce("mean"))
    yield case("sum-opset18", Reduce("sum"))
    yield case("norm-opset18", Reduce("norm"))
    yield case("amax-opset18", Reduce("amax"))
    # The workaround: the same mean on the same input (case() seeds it), exported at opset 17, where axes is an
    # attribute.
    yield case("mean-opset17", Reduce("mean"), opset=17, trigger=False, rewrites="mean-opset18")


def variants():
    yield case("mean", Reduce("mean"))
    yield case("mean-no-keepdim", Reduce("mean", keepdim=False))
    yield case("mean-last-axis", Reduce("mean", dim=-1))
    yield case("mean-after-relu", Reduce("mean", pre=True))
    yield case("mean-dynamo", Reduce("mean"), dynamo=True)
    yield case("mean-onnxsim", Reduce("mean"), simplify=True)
    yield case("sum", Reduce("sum"))
    yield case("sum-opset13", Reduce("sum"), opset=13)
    yield case("norm", Reduce("norm"))
    yield case("normalize", Reduce("normalize"))
    yield case("amax", Reduce("amax"))
    yield case("amin", Reduce("amin"))
    yield case("mean-spatial", Reduce("mean", dim=(2, 3), keepdim=False))  # a pooling head: x.mean((2, 3))
    yield case("mean-spatial-keepdim", Reduce("mean", dim=(2, 3)))
    yield case("mean-attr-opset17", Reduce("mean"), opset=17)  # near miss: axes is an attribute
    yield case("norm-opset17", Reduce("norm"), opset=17)  # near miss
    yield case("softmax", Reduce("softmax"))  # near miss: no Reduce op
    # LoFTR's linear attention (einsums written as matmuls), at opset 17: its ReduceSum takes the axes as an input
    yield case("loftr-linear-attention", LinearAttention(6), opset=17, shape=(1, 6, 2, 4))
