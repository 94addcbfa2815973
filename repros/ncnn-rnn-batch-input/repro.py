"""KB066: ncnn has no batch axis. An LSTM / GRU / RNN converted by onnx2ncnn and fed a batch of 2 as a 3-D
ncnn.Mat runs the first sample only (batch_first) or takes the batch for time steps (sequence-first), with
no message. Tencent/ncnn#3665, #234."""

import torch
from torch import nn

from kb.export import Case

T, F, H = 5, 8, 16  # sequence length, features, hidden size
# onnx2ncnn needs opset 11 or 12 (from 13 the LSTM's Squeeze axes are an input: ncnn-onnx2ncnn-squeeze-
# unsqueeze-axes) and onnxsim (torch writes the zero initial states with Shape / Expand, which it lacks).
EXPORT = dict(opset=11, dynamo=False, simplify=True)
IO = dict(input_names=["in0"], output_names=["out0"])


class Rnn(nn.Module):
    """One recurrent layer; returns its output sequence."""

    def __init__(self, kind="lstm", batch_first=True, bidirectional=False):
        super().__init__()
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind](F, H, batch_first=batch_first,
                                                                         bidirectional=bidirectional)

    def forward(self, x):
        return self.rnn(x)[0]


def batch(n, batch_first=True, seed=1):
    torch.manual_seed(seed)
    return torch.randn(n, T, F) if batch_first else torch.randn(T, n, F)


def model(seed=0, **kw):
    torch.manual_seed(seed)
    return Rnn(**kw)


def cases():
    yield Case("lstm-batch2", model(), (batch(2),), **IO, **EXPORT)
    # Control: the same LSTM and path with a batch of one.
    yield Case("lstm-batch1", model(), (batch(1),), **IO, **EXPORT)


def variants():
    yield Case("gru-batch2", model(kind="gru"), (batch(2, seed=2),), **IO, **EXPORT)
    yield Case("rnn-batch2", model(kind="rnn"), (batch(2, seed=2),), **IO, **EXPORT)
    yield Case("lstm-batch4", model(), (batch(4, seed=2),), **IO, **EXPORT)
    yield Case("lstm-opset12", model(), (batch(2, seed=2),), **IO, opset=12, dynamo=False, simplify=True)
    yield Case("lstm-seq-first-batch2", model(batch_first=False), (batch(2, False, seed=2),), **IO, **EXPORT)
    yield Case("gru-seq-first-batch2", model(kind="gru", batch_first=False), (batch(2, False, seed=2),), **IO,
               **EXPORT)
    yield Case("lstm-bidirectional-batch2", model(bidirectional=True), (batch(2, seed=2),), **IO, **EXPORT)
    # Near misses: a batch of one.
    yield Case("lstm-batch1-near-miss", model(), (batch(1, seed=2),), **IO, **EXPORT)
    yield Case("gru-batch1-near-miss", model(kind="gru"), (batch(1, seed=2),), **IO, **EXPORT)
