"""known-bug: Tencent/ncnn#4172 -- onnx2ncnn copies ONNX Gemm's alpha and beta into ncnn's Gemm layer unchanged, but ncnn's Gemm
computes (A*B + beta*C) * alpha, not ONNX's alpha*A*B + beta*C: torch.addmm(c, a, b, alpha=2) scales c by 2
as well, and the output is wrong (no message)."""

import torch
from torch import nn

from kb.blocks import Fc, randn
from kb.export import Case

M, K, N = 4, 5, 3  # a (M, K) @ (K, N) product, C is (M, N)


class Addmm(nn.Module):
    """torch.addmm(c, a, b, beta=beta, alpha=alpha) = beta * c + alpha * (a @ b): one ONNX Gemm."""

    def __init__(self, alpha=2.0, beta=0.5):
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, c, a, b):
        return torch.addmm(c, a, b, beta=self.beta, alpha=self.alpha)


class AlphaInOperand(nn.Module):
    """The workaround: the same product with alpha moved into an operand, torch.addmm(c, alpha * a, b, beta=beta):
    the Gemm then has alpha=1, where ncnn's formula and ONNX's agree."""

    def __init__(self, alpha=2.0, beta=0.5):
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, c, a, b):
        return torch.addmm(c, self.alpha * a, b, beta=self.beta)


class AddmmParams(nn.Module):
    """A layer that keeps its weight and bias as parameters: torch.addmm(bias, x, weight, alpha=alpha)."""

    def __init__(self, alpha=2.0, beta=1.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(K, N))
        self.bias = nn.Parameter(torch.randn(N))
        self.alpha, self.beta = alpha, beta

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight, beta=self.beta, alpha=self.alpha)


class ScaledResidualMLP(nn.Module):
    """A residual MLP on (tokens, channels) whose branch is scaled, x + 0.1 * (relu(fc1(x)) @ w2), written with
    torch.addmm(x, h, w2, alpha=0.1): ncnn gives x * 0.1 + 0.1 * branch."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(K, 8)
        self.w2 = nn.Parameter(torch.randn(8, K) * 0.3)

    def forward(self, x):
        return torch.addmm(x, torch.relu(self.fc1(x)), self.w2, alpha=0.1)


def cab(seed=1, c_shape=(M, N)):
    """Inputs of torch.addmm: c (M, N), a (M, K), b (K, N)."""
    torch.manual_seed(seed)
    return torch.randn(*c_shape), torch.randn(M, K), torch.randn(K, N)


def io(n):
    return dict(input_names=[f"in{i}" for i in range(n)], output_names=["out0"])


def cases():
    yield Case("addmm", Addmm(), cab(), opset=13, dynamo=False, torchscript=True, **io(3))
    # Workaround, fed the same tensors: alpha moved into the first operand.
    yield Case("alpha-in-operand", AlphaInOperand(), cab(), opset=13, dynamo=False, trigger=False,
               rewrites="addmm", **io(3))
    # Control on the same path: the same Gemm layer with alpha = beta = 1.
    yield Case("addmm-alpha1", Addmm(1.0, 1.0), cab(), opset=13, dynamo=False, trigger=False, **io(3))


def variants():
    yield Case("addmm-opset13", Addmm(), cab(2), opset=13, dynamo=False, **io(3))
    yield Case("addmm-opset17", Addmm(), cab(2), opset=17, dynamo=False, **io(3))
    yield Case("addmm-dynamo", Addmm(), cab(2), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io(3))  # inline weights: not ncnn-onnx2ncnn-external-data
    yield Case("addmm-onnxsim", Addmm(), cab(2), opset=13, dynamo=False, simplify=True, **io(3))
    yield Case("alpha-only", Addmm(2.0, 1.0), cab(2), opset=13, dynamo=False, **io(3))
    yield Case("bias-1d", Addmm(), cab(2, (N,)), opset=13, dynamo=False, **io(3))
    torch.manual_seed(3)
    yield Case("params", AddmmParams(), (randn(M, K, seed=3),), opset=13, dynamo=False, **io(1))
    torch.manual_seed(4)
    yield Case("scaled-residual-mlp", ScaledResidualMLP(), (randn(M, K, seed=4),), opset=13, dynamo=False, **io(1))
    # Near misses: beta scaled but alpha = 1; alpha scaled but beta = 0 (C is not used); nn.Linear.
    yield Case("beta-only-near-miss", Addmm(1.0, 0.5), cab(2), opset=13, dynamo=False, **io(3))
    torch.manual_seed(5)
    yield Case("beta0-near-miss", AddmmParams(2.0, 0.0), (randn(M, K, seed=5),), opset=13, dynamo=False, **io(1))
    torch.manual_seed(6)
    yield Case("linear-near-miss", Fc(K, N), (randn(M, K, seed=6),), opset=13, dynamo=False, **io(1))
