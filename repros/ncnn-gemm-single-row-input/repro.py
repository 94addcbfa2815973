"""KB080: ncnn's x86 Gemm layer (from 1.0.20230223) reads a 1-D A blob that ncnn has packed (its length a multiple
of 4) as elempack rows of A.w columns: a single-row product (batch 1, or the 1-D output of a Flatten) comes out with
4, 8 or 16 rows of wrong values instead of one. onnx2ncnn writes that Gemm layer for every ONNX Gemm that is not
nn.Linear's form (transB=0: torch.addmm, torch.mm, F.linear of a transposed weight, MatMul + Add fused by
onnx-simplifier); nn.Linear becomes an InnerProduct, which reads 1-D blobs correctly."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

K, N = 8, 3  # x (1, K) @ w (K, N) + b (N,): K a multiple of 4, so ncnn packs the 1-D blob of x
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)


class Addmm(nn.Module):
    """A layer kept as (in, out) weights, as code ported from Keras/TF or written by hand does:
    torch.addmm(b, x, w), one ONNX Gemm with transB=0."""

    def __init__(self, k=K, n=N, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.w = nn.Parameter(torch.randn(k, n))
        self.b = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return torch.addmm(self.b, x, self.w)


class Mm(Addmm):
    """torch.mm(x, w): a Gemm with beta=0 and no bias."""

    def forward(self, x):
        return torch.mm(x, self.w)


class LinearOfTransposed(Addmm):
    """F.linear(x, w.t(), b): the exporter still writes Gemm(transB=0) with w as stored."""

    def forward(self, x):
        return F.linear(x, self.w.t(), self.b)


class MatmulAdd(Addmm):
    """x @ w + b: MatMul + Add, which onnx2ncnn writes as an InnerProduct (and onnx-simplifier fuses into a Gemm)."""

    def forward(self, x):
        return x @ self.w + self.b


class AsLinear(nn.Module):
    """The workaround: the same weights in an nn.Linear (weight = w.t()), exported as Gemm(transB=1), which
    onnx2ncnn writes as an InnerProduct."""

    def __init__(self, src: Addmm):
        super().__init__()
        k, n = src.w.shape
        self.fc = nn.Linear(k, n)
        with torch.no_grad():
            self.fc.weight.copy_(src.w.t())
            self.fc.bias.copy_(src.b)

    def forward(self, x):
        return self.fc(x)


class ClassifierHead(nn.Module):
    """A small CNN classifier: Conv, ReLU, global average pooling, flatten, then the classifier as
    torch.addmm(b, h, w) with w (16, 10). The Flatten's output is a 1-D blob in ncnn."""

    def __init__(self, seed=0, mm=False):
        super().__init__()
        torch.manual_seed(seed)
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.w = nn.Parameter(torch.randn(16, 10) * 0.3)
        self.b = nn.Parameter(torch.randn(10))
        self.mm = mm

    def features(self, x):
        return torch.flatten(F.adaptive_avg_pool2d(torch.relu(self.conv(x)), 1), 1)

    def forward(self, x):
        h = self.features(x)
        return torch.mm(h, self.w) if self.mm else torch.addmm(self.b, h, self.w)


class HeadAsLinear(nn.Module):
    """The workaround for the classifier: the same conv and the classifier's weights in an nn.Linear."""

    def __init__(self, src: ClassifierHead):
        super().__init__()
        self.src = src
        self.fc = nn.Linear(16, 10)
        with torch.no_grad():
            self.fc.weight.copy_(src.w.t())
            self.fc.bias.copy_(src.b)

    def forward(self, x):
        return self.fc(self.src.features(x))


class LinearLayer(nn.Module):
    """Near miss: nn.Linear (Gemm transB=1), written as an InnerProduct."""

    def __init__(self, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        return self.fc(x)


class LstmLinear(nn.Module):
    """A one-layer nn.LSTM, then nn.Linear on its (3-D) output sequence, as a streaming speech or text model has.
    Exported with dynamo=False and simplified by onnx-simplifier, the Linear becomes Reshape -> Gemm(transB=0) ->
    Reshape; onnx2ncnn writes the Gemm layer, fed a 1-D blob of `hidden` values when the sequence is one step long.
    With `state`, the initial hidden and cell states are inputs and the final ones outputs."""

    def __init__(self, features, hidden, out, batch_first=False, state=False, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.lstm = nn.LSTM(features, hidden, num_layers=1, batch_first=batch_first)
        self.fc = nn.Linear(hidden, out)
        self.state = state

    def forward(self, x, h=None, c=None):
        if self.state:
            y, (hn, cn) = self.lstm(x, (h, c))
            return self.fc(y), hn, cn
        return self.fc(self.lstm(x)[0])


def lstm_inputs(features, hidden, batch_first=False, state=False, seed=300):
    """One time step of one sequence: (1, 1, features), and with `state` h0 and c0 (1, 1, hidden)."""
    torch.manual_seed(seed)
    x = torch.randn(1, 1, features)
    return (x, torch.randn(1, 1, hidden), torch.randn(1, 1, hidden)) if state else (x,)


def rows(n=1, k=K, seed=100):
    torch.manual_seed(seed)
    return torch.randn(n, k)


def image(seed=200):
    torch.manual_seed(seed)
    return torch.randn(1, 3, 8, 8)


IO = dict(input_names=["in0"], output_names=["out0"])
STATE_IO = dict(input_names=["in0", "in1", "in2"], output_names=["out0", "out1", "out2"])


def cases():
    addmm, head = Addmm(), ClassifierHead()
    yield Case("addmm", addmm, (rows(),), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("classifier-head", head, (image(),), opset=13, dynamo=False, torchscript=True, **IO)
    # Workarounds, fed the same tensors, with the same weights.
    yield Case("as-linear", AsLinear(addmm), (rows(),), opset=13, dynamo=False, trigger=False, rewrites="addmm", **IO)
    yield Case("matmul-add", MatmulAdd(), (rows(),), opset=13, dynamo=False, trigger=False, rewrites="addmm", **IO)
    yield Case("head-as-linear", HeadAsLinear(head), (image(),), opset=13, dynamo=False, trigger=False,
               rewrites="classifier-head", **IO)
    # Controls on the same path (onnx2ncnn's Gemm layer with a MemoryData weight): two rows (a 2-D blob), and one
    # row whose length (7) is no multiple of 4, which ncnn does not pack.
    yield Case("addmm-two-rows", addmm, (rows(2),), opset=13, dynamo=False, trigger=False, **IO)
    yield Case("addmm-k7", Addmm(7), (rows(1, 7),), opset=13, dynamo=False, trigger=False, **IO)
    # The LSTM route: LSTM 321 -> 384 with h0/c0 as inputs, batch_first, one time step, then Linear 384 -> 321;
    # opset 11 (batch_first at opset 13 and above meets ncnn-onnx2ncnn-squeeze-unsqueeze-axes, KB034, first),
    # then onnx-simplifier.
    yield Case("lstm-linear", LstmLinear(321, 384, 321, batch_first=True, state=True),
               lstm_inputs(321, 384, batch_first=True, state=True), opset=11, dynamo=False, simplify=True, **STATE_IO)


def variants():
    yield Case("addmm-opset13", Addmm(seed=1), (rows(seed=101),), opset=13, dynamo=False, **IO)
    yield Case("addmm-opset17", Addmm(seed=1), (rows(seed=101),), opset=17, dynamo=False, **IO)
    yield Case("addmm-dynamo", Addmm(seed=1), (rows(seed=101),), opset=18, dynamo=True, export_kwargs=INLINE, **IO)
    yield Case("addmm-onnxsim", Addmm(seed=1), (rows(seed=101),), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("mm-no-bias", Mm(seed=2), (rows(seed=102),), opset=13, dynamo=False, **IO)
    yield Case("addmm-k12", Addmm(12, seed=3), (rows(1, 12, seed=103),), opset=13, dynamo=False, **IO)
    yield Case("linear-of-transposed", LinearOfTransposed(seed=4), (rows(seed=104),), opset=13, dynamo=False, **IO)
    yield Case("matmul-add-onnxsim", MatmulAdd(seed=5), (rows(seed=105),), opset=13, dynamo=False, simplify=True,
               **IO)
    yield Case("classifier-mm-opset17", ClassifierHead(6, mm=True), (image(206),), opset=17, dynamo=False, **IO)
    # Near misses: two rows; one row of 7 (not packed); nn.Linear and MatMul + Add (both InnerProduct).
    yield Case("two-rows-near-miss", Addmm(seed=7), (rows(2, seed=107),), opset=13, dynamo=False, **IO)
    yield Case("k7-near-miss", Addmm(7, seed=8), (rows(1, 7, seed=108),), opset=13, dynamo=False, **IO)
    yield Case("linear-near-miss", LinearLayer(9), (rows(seed=109),), opset=13, dynamo=False, **IO)
    yield Case("matmul-add-near-miss", MatmulAdd(seed=10), (rows(seed=110),), opset=13, dynamo=False, **IO)
    # The LSTM route, one time step (a longer sequence fails by another cause: onnx2ncnn drops the Reshape's first
    # dim, KB061),
    # sequence first, after onnx-simplifier: hidden size 384 is packed; 7 is not (near miss). (A hidden size of 16 is
    # packed too, but its 4 outputs come from memory the Gemm reads past its input: some runs give NaN, so it judges
    # nothing stable.)
    yield Case("lstm-h384-state-opset13", LstmLinear(321, 384, 321, state=True, seed=13),
               lstm_inputs(321, 384, state=True, seed=313), opset=13, dynamo=False, simplify=True, **STATE_IO)
    yield Case("lstm-h7-near-miss", LstmLinear(8, 7, 4, seed=14), lstm_inputs(8, 7, seed=314), opset=11,
               dynamo=False, simplify=True, **IO)
