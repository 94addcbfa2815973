"""known-bug: onnx2ncnn writes the Transpose of a 2-D tensor (x.t(), perm [1, 0]) as an ncnn Permute with no
order type, and Permute's default order keeps the blob as it is: x.t() is not transposed, and x.t() @ w
multiplies the wrong matrix (no message)."""

import torch
from torch import nn

from kb.export import Case

R, C, N = 5, 4, 3  # x is (R, C); w is (R, N), so x.t() @ w is (C, N)


class T(nn.Module):
    """x.t(): one Transpose(perm=[1, 0])."""

    def forward(self, x):
        return x.t()


class TMatmul(nn.Module):
    """x.t() @ w, a product with a transposed 2-D activation (transA)."""

    def forward(self, x, w):
        return x.t() @ w


class TMatmul3d(nn.Module):
    """The workaround: the same product with a leading axis of 1, so that the Transpose is 3-D (perm [0, 2, 1]),
    which onnx2ncnn maps. The reshape keeps the leading 1, which onnx2ncnn drops as the batch."""

    def forward(self, x, w):
        return x.reshape(1, R, C).transpose(1, 2) @ w


class Permute10(nn.Module):
    """x.permute(1, 0) of a square (C, C) matrix: the shape is right, the values are not."""

    def forward(self, x):
        return x.permute(1, 0)


class Similarity(nn.Module):
    """CLIP-style similarity logits: normalized (B, D) image and text embeddings, scale * img @ txt.t()."""

    def forward(self, img, txt):
        img = img / img.norm(dim=1, keepdim=True)
        txt = txt / txt.norm(dim=1, keepdim=True)
        return 10.0 * img @ txt.t()


class Gram(nn.Module):
    """A style-transfer Gram matrix: features (C, H*W), f @ f.t() / (H*W)."""

    def forward(self, f):
        return f @ f.t() / f.shape[1]


class TokenMixing(nn.Module):
    """An MLP-Mixer token-mixing step on (tokens, channels): transpose, mix the tokens with a Linear, transpose
    back, add."""

    def __init__(self):
        super().__init__()
        self.mix = nn.Linear(R, R)

    def forward(self, x):
        return x + self.mix(x.t()).t()


class Transpose3d(nn.Module):
    """Near miss: x.transpose(1, 2) of a (1, R, C) tensor: perm [0, 2, 1]."""

    def forward(self, x):
        return x.transpose(1, 2)


class LinearWeightT(nn.Module):
    """Near miss: x @ self.weight.t() with a parameter: the exporter folds the Transpose into the constant."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, C))

    def forward(self, x):
        return x @ self.weight.t()


def randn(*shape, seed=1):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def io(n):
    return dict(input_names=[f"in{i}" for i in range(n)], output_names=["out0"])


def xw(seed=1):
    torch.manual_seed(seed)
    return torch.randn(R, C), torch.randn(R, N)


def cases():
    yield Case("t-matmul", TMatmul(), xw(), opset=13, dynamo=False, torchscript=True, **io(2))
    yield Case("t", T(), (randn(R, C),), opset=13, dynamo=False, torchscript=True, **io(1))
    # Workaround, fed the same tensors: the transpose done on 3-D (1, R, C).
    yield Case("t-matmul-3d", TMatmul3d(), xw(), opset=13, dynamo=False, trigger=False, rewrites="t-matmul", **io(2))
    # Control on the same path: a Transpose that onnx2ncnn maps, on the same data given a leading 1.
    yield Case("transpose-3d", Transpose3d(), (randn(1, R, C),), opset=13, dynamo=False, trigger=False, **io(1))


def variants():
    yield Case("t-matmul-opset13", TMatmul(), xw(2), opset=13, dynamo=False, **io(2))
    yield Case("t-matmul-opset17", TMatmul(), xw(2), opset=17, dynamo=False, **io(2))
    yield Case("t-matmul-dynamo", TMatmul(), xw(2), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io(2))  # inline weights: not ncnn-onnx2ncnn-external-data
    yield Case("t-matmul-onnxsim", TMatmul(), xw(2), opset=13, dynamo=False, simplify=True, **io(2))
    yield Case("permute-square", Permute10(), (randn(C, C, seed=2),), opset=13, dynamo=False, **io(1))
    yield Case("similarity", Similarity(), (randn(3, 8, seed=2), randn(6, 8, seed=3)), opset=13, dynamo=False,
               **io(2))
    yield Case("gram", Gram(), (randn(C, 16, seed=2),), opset=13, dynamo=False, **io(1))
    torch.manual_seed(4)
    yield Case("token-mixing", TokenMixing(), (randn(R, C, seed=4),), opset=13, dynamo=False, **io(1))
    # Near misses: a 3-D transpose; a transposed parameter (folded into the weight by the exporter).
    yield Case("transpose-3d-near-miss", Transpose3d(), (randn(1, R, C, seed=2),), opset=13, dynamo=False, **io(1))
    torch.manual_seed(5)
    yield Case("weight-t-near-miss", LinearWeightT(), (randn(R, C, seed=5),), opset=13, dynamo=False, **io(1))
