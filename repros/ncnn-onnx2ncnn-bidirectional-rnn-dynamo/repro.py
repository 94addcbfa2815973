"""KB107: a bidirectional nn.LSTM / nn.GRU / nn.RNN exported with torch.onnx.export(dynamo=True) is written as
LSTM -> Transpose(0, 2, 1, 3) -> Reshape(T, B, 2H), the Reshape's shape spelled out. onnx2ncnn folds that tail into
its own LSTM layer only when the Reshape's shape is (0, 0, -1), as the TorchScript exporter writes it; otherwise it
keeps a Permute and a Reshape after ncnn's 2-D LSTM output, the Permute fails and Extractor::extract returns -1.
The problem of Tencent/ncnn#2451 (2020), solved for the TorchScript export, back with the dynamo exporter."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

T, F, H = 5, 8, 16  # time steps, features, hidden size
IO = dict(input_names=["in0"], output_names=["out0"])
DYN = dict(dynamo=True, export_kwargs={"external_data": False}, **IO)  # torch 2.13's default exporter
# The TorchScript export needs onnxsim for onnx2ncnn (torch writes the zero initial states with Shape / Expand).
TS = dict(dynamo=False, simplify=True, **IO)
RNN = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}


class BiRnn(nn.Module):
    """One bidirectional recurrent layer (batch_first), returning its output sequence (1, T, 2H)."""

    def __init__(self, kind="lstm", layers=1, bidirectional=True):
        super().__init__()
        self.rnn = RNN[kind](F, H, num_layers=layers, batch_first=True, bidirectional=bidirectional)

    def forward(self, x):
        return self.rnn(x)[0]


class BiLstmHead(nn.Module):
    """A sequence tagger / CRNN head: a bidirectional LSTM, then a per-step classifier."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(F, H, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * H, 6)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])


class BiLstmSum(nn.Module):
    """The two directions' outputs added, y[..., :H] + y[..., H:] (a common way to merge them)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(F, H, batch_first=True, bidirectional=True)

    def forward(self, x):
        y = self.rnn(x)[0]
        return y[..., :H] + y[..., H:]


def x1(seed=1):
    return (randn(1, T, F, seed=seed),)


def cases():
    yield Case("lstm-bi-dynamo", seeded(BiRnn), x1(), opset=18, torchscript=True, **DYN)
    # Workaround: the same module (same weights, same input) from the TorchScript exporter, then onnxsim.
    yield Case("lstm-bi-torchscript", seeded(BiRnn), x1(), opset=14, trigger=False, rewrites="lstm-bi-dynamo", **TS)
    # Control on the same path: a bidirectional GRU from the TorchScript exporter (its Reshape is (0, 0, -1)).
    yield Case("gru-bi-torchscript", seeded(BiRnn, "gru"), x1(), opset=14, trigger=False, **TS)


def variants():
    x = x1(2)
    yield Case("lstm-bi-opset18", seeded(BiRnn), x, opset=18, **DYN)
    yield Case("lstm-bi-opset20", seeded(BiRnn), x, opset=20, **DYN)
    yield Case("lstm-bi-onnxsim", seeded(BiRnn), x, opset=18, simplify=True, **DYN)
    yield Case("gru-bi-dynamo", seeded(BiRnn, "gru"), x, opset=18, **DYN)
    yield Case("gru-bi-onnxsim", seeded(BiRnn, "gru"), x, opset=18, simplify=True, **DYN)
    yield Case("lstm-bi-2layer-dynamo", seeded(BiRnn, "lstm", 2), x, opset=18, **DYN)
    yield Case("lstm-bi-head-dynamo", seeded(BiLstmHead), x, opset=18, **DYN)
    yield Case("lstm-bi-sum-dynamo", seeded(BiLstmSum), x, opset=18, **DYN)
    # Near misses: the TorchScript exporter, whose Reshape is (0, 0, -1), which onnx2ncnn folds.
    yield Case("lstm-bi-torchscript-opset11-near-miss", seeded(BiRnn), x, opset=11, **TS)
    yield Case("lstm-bi-torchscript-opset14-near-miss", seeded(BiRnn), x, opset=14, **TS)
    yield Case("gru-bi-torchscript-near-miss", seeded(BiRnn, "gru"), x, opset=14, **TS)
    yield Case("lstm-bi-2layer-torchscript-near-miss", seeded(BiRnn, "lstm", 2), x, opset=11, **TS)
