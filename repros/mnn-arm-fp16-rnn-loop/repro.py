"""KB163: from MNN 3.4.0 mnnconvert turns an ONNX GRU or LSTM into a While loop; with precision low on an ARMv8.2
CPU (fp16 arithmetic) that loop's outputs are right at the first time step and wrong from the second on, by tenths
on outputs bounded by 1. Every value is small: no overflow. Precision normal, an ARMv8.0 CPU and x86 are right."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

X = randn(1, 8, 16)  # batch 1, 8 time steps, 16 features


class Rnn(nn.Module):
    """nn.GRU / nn.LSTM / nn.RNN (input 16, hidden 32), returning the outputs of every time step."""

    def __init__(self, kind="GRU", batch_first=True, **kw):
        super().__init__()
        self.batch_first = batch_first
        self.rnn = getattr(nn, kind)(16, 32, batch_first=batch_first, **kw)

    def forward(self, x):
        return self.rnn(x if self.batch_first else x.transpose(0, 1))[0]


class UnrolledGRU(nn.Module):
    """The same GRU as a GRUCell applied step by step in Python: exported as plain MatMul/Sigmoid/Tanh ops,
    one set per time step (the sequence length is fixed at export)."""

    def __init__(self, gru):
        super().__init__()
        self.cell = nn.GRUCell(16, 32)
        r = gru.rnn
        for a, b in (("weight_ih", "weight_ih_l0"), ("weight_hh", "weight_hh_l0"), ("bias_ih", "bias_ih_l0"),
                     ("bias_hh", "bias_hh_l0")):
            getattr(self.cell, a).data.copy_(getattr(r, b).data)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 32)
        ys = []
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            ys.append(h)
        return torch.stack(ys, 1)


GRU = seeded(Rnn, "GRU")


def cases():
    yield Case("gru", GRU, (X,), opset=17, dynamo=False, ways=["opset11", "opset13", "opset17-onnxsim"])
    yield Case("lstm", seeded(Rnn, "LSTM"), (X,), opset=17, dynamo=False)
    # The same GRU over one time step (its first): right, so the error is in what the loop carries to the next.
    yield Case("gru-one-step", GRU, (X[:, :1],), opset=17, dynamo=False)
    # The workaround: the same weights, unrolled; judged against gru's torch output.
    yield Case("gru-unrolled", UnrolledGRU(GRU), (X,), opset=17, dynamo=False, trigger=False, rewrites="gru")


def variants():
    # All converted on x86 and run with the Module API on an emulated cortex-a76, precision low.
    yield Case("gru-bidirectional", seeded(Rnn, "GRU", bidirectional=True), (X,), opset=17, dynamo=False)
    yield Case("gru-2-layers", seeded(Rnn, "GRU", num_layers=2), (X,), opset=17, dynamo=False)
    yield Case("gru-time-first", seeded(Rnn, "GRU", batch_first=False), (X,), opset=17, dynamo=False)
    yield Case("lstm", seeded(Rnn, "LSTM"), (X,), opset=17, dynamo=False)
    yield Case("lstm-2-layers", seeded(Rnn, "LSTM", num_layers=2), (X,), opset=17, dynamo=False)
    yield Case("lstm-bidirectional", seeded(Rnn, "LSTM", bidirectional=True), (X,), opset=17, dynamo=False)
    # Near misses: a tanh RNN (ONNX RNN, which mnnconvert 3.6.1 does not turn into a While loop) and the GRU
    # unrolled by hand.
    yield Case("rnn-tanh", seeded(Rnn, "RNN"), (X,), opset=17, dynamo=False)
    yield Case("gru-unrolled", UnrolledGRU(GRU), (X,), opset=17, dynamo=False)
