"""KB079: onnx2ncnn turns every Gemm with alpha = beta = 1, transA = 0, transB = 1 (what nn.Linear exports) into an
InnerProduct and copies its B and C from its table of initializers without checking that they are there. A weight or
bias computed in the graph (weight norm exported without constant folding), or fed as a model input, gives an
InnerProduct with 0 weights that ncnn refuses ("layer load_param N /Gemm failed"); a Gemm with no C at all (nn.Linear
(bias=False) from the dynamo exporter) makes onnx2ncnn read a third input that does not exist, and protobuf aborts it.
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm

from kb.export import Case

K, N, ROWS = 8, 3, 4  # nn.Linear(K, N) on a (ROWS, K) input: 2-D, so no batch-axis or 4-D problem is involved
NOFOLD = {"do_constant_folding": False}  # as training scripts often export; weight norm is then left in the graph
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)


def wn_linear(seed=0, bias=True, cin=K, cout=N):
    torch.manual_seed(seed)
    return weight_norm(nn.Linear(cin, cout, bias=bias))


def removed(seed=0):
    """The workaround: the same layer (same seed, so the same weights) with its weight norm removed before export."""
    m = wn_linear(seed)
    parametrize.remove_parametrizations(m, "weight")
    return m


def linear(seed=0, bias=True, cin=K, cout=N):
    torch.manual_seed(seed)
    return nn.Linear(cin, cout, bias=bias)


class ScaledBias(nn.Module):
    """A bias computed in the graph (bias * a learned scale), the weight a plain parameter."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.fc = nn.Linear(K, N)
        self.g = nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        return F.linear(x, self.fc.weight, self.fc.bias * self.g)


class InputScaledWeight(nn.Module):
    """A weight that depends on the input (a gated / hypernetwork-style layer): no tool can fold it."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        return F.linear(x, self.fc.weight * torch.sigmoid(x.mean()), self.fc.bias)


class FunctionalLinear(nn.Module):
    """F.linear(x, w, b) with the weight and bias passed in as model inputs."""

    def forward(self, x, w, b):
        return F.linear(x, w, b)


class WNBlock(nn.Module):
    """A residual MLP on (tokens, channels) with weight-normed layers (as in vocoders and TTS decoders)."""

    def __init__(self):
        super().__init__()
        self.fc1 = wn_linear(6, cin=K, cout=16)
        self.fc2 = wn_linear(7, cin=16, cout=K)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class BiasFreeMLP(nn.Module):
    """Linear(bias=False), ReLU, Linear: a projection without bias, as in many transformer MLPs."""

    def __init__(self):
        super().__init__()
        self.fc1 = linear(8, bias=False, cout=16)
        self.fc2 = linear(9, cin=16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConstantTensors(nn.Module):
    """Near miss (Tencent/ncnn#2427): weight and bias are plain tensor attributes, not parameters; torch writes them
    as Constant nodes feeding the Gemm, which onnx2ncnn does read as weights."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(10)
        self.w = torch.randn(N, K)
        self.b = torch.randn(N)

    def forward(self, x):
        return F.linear(x, self.w, self.b)


class AddmmParams(nn.Module):
    """Near miss: torch.addmm(b, x, w) with w of shape (K, N): a Gemm with transB = 0, which onnx2ncnn writes as
    ncnn's Gemm layer fed by MemoryData blobs, not as an InnerProduct."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(11)
        self.w = nn.Parameter(torch.randn(K, N))
        self.b = nn.Parameter(torch.randn(N))

    def forward(self, x):
        return torch.addmm(self.b, x, self.w)


def x2d(seed=0, rows=ROWS):
    torch.manual_seed(100 + seed)
    return torch.randn(rows, K)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    layer = wn_linear()
    yield Case("weight-norm-linear", layer, (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD, torchscript=True,
               **IO)
    no_bias = linear(1, bias=False)
    yield Case("linear-no-bias-dynamo", no_bias, (x2d(),), opset=18, dynamo=True, export_kwargs=INLINE,
               torchscript=True, **IO)
    # Workarounds, fed the same tensors, with the same weights.
    yield Case("weight-norm-folded", layer, (x2d(),), opset=13, dynamo=False, trigger=False,
               rewrites="weight-norm-linear", **IO)
    yield Case("weight-norm-removed", removed(), (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD,
               trigger=False, rewrites="weight-norm-linear", **IO)
    yield Case("weight-norm-onnxsim", layer, (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD, simplify=True,
               trigger=False, rewrites="weight-norm-linear", **IO)
    yield Case("no-bias-torchscript-exporter", no_bias, (x2d(),), opset=18, dynamo=False, trigger=False,
               rewrites="linear-no-bias-dynamo", **IO)
    # Controls on the same path (a Gemm written as an InnerProduct), weights and bias plain initializers.
    yield Case("plain-linear-nofold", linear(2), (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD,
               trigger=False, **IO)
    yield Case("linear-bias-dynamo", linear(3), (x2d(),), opset=18, dynamo=True, export_kwargs=INLINE,
               trigger=False, **IO)


def variants():
    yield Case("wn-opset13", wn_linear(20), (x2d(1),), opset=13, dynamo=False, export_kwargs=NOFOLD, **IO)
    yield Case("wn-opset17", wn_linear(21), (x2d(1),), opset=17, dynamo=False, export_kwargs=NOFOLD, **IO)
    torch.manual_seed(22)
    legacy = torch.nn.utils.weight_norm(nn.Linear(K, N))
    yield Case("legacy-weight-norm", legacy, (x2d(1),), opset=13, dynamo=False, export_kwargs=NOFOLD, **IO)
    yield Case("wn-residual-block", WNBlock(), (x2d(1),), opset=13, dynamo=False, export_kwargs=NOFOLD, **IO)
    yield Case("computed-bias", ScaledBias(), (x2d(1),), opset=13, dynamo=False, export_kwargs=NOFOLD, **IO)
    yield Case("input-scaled-weight", InputScaledWeight(), (x2d(1),), opset=13, dynamo=False, **IO)
    torch.manual_seed(23)
    yield Case("weight-as-input", FunctionalLinear(), (x2d(1), torch.randn(N, K), torch.randn(N)), opset=13,
               dynamo=False, input_names=["in0", "in1", "in2"], output_names=["out0"])
    yield Case("no-bias-dynamo-opset18", linear(24, bias=False), (x2d(1),), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("no-bias-dynamo-opset20", linear(24, bias=False), (x2d(1),), opset=20, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("no-bias-dynamo-onnxsim", linear(24, bias=False), (x2d(1),), opset=18, dynamo=True,
               export_kwargs=INLINE, simplify=True, **IO)
    yield Case("bias-free-mlp-dynamo", BiasFreeMLP(), (x2d(1),), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    # Near misses: the same layers where B and C are constants, or where the Gemm is not written as an InnerProduct.
    yield Case("wn-folded-near-miss", wn_linear(20), (x2d(1),), opset=13, dynamo=False, **IO)
    yield Case("wn-onnxsim-near-miss", WNBlock(), (x2d(1),), opset=13, dynamo=False, export_kwargs=NOFOLD,
               simplify=True, **IO)
    yield Case("constant-nodes-near-miss", ConstantTensors(), (x2d(1),), opset=13, dynamo=False,
               export_kwargs=NOFOLD, **IO)
    yield Case("no-bias-torchscript-near-miss", linear(24, bias=False), (x2d(1),), opset=18, dynamo=False, **IO)
    yield Case("no-bias-dynamo-3d-near-miss", linear(25, bias=False), (x2d(1).unsqueeze(0),), opset=18, dynamo=True,
               export_kwargs=INLINE, **IO)
    yield Case("addmm-transb0-near-miss", AddmmParams(), (x2d(1),), opset=13, dynamo=False, **IO)
