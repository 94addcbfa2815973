"""KB027: regression guard for alibaba/MNN#1890, #1138, #1089, #640 -- ONNX LSTM in its common forms."""

import torch
from torch import nn

from kb.export import Case

T, F, H = 6, 12, 16  # sequence length, features, hidden size


class Net(nn.Module):
    """Linear -> LSTM -> Linear; the LSTM in the form real models use."""

    def __init__(self, layers=1, bidirectional=False, bias=True, batch_first=True, state=False, kind="lstm"):
        super().__init__()
        self.batch_first, self.state = batch_first, state
        self.fc_in = nn.Linear(F, H)
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = rnn(H, H, num_layers=layers, bidirectional=bidirectional, bias=bias, batch_first=batch_first)
        self.fc_out = nn.Linear(H * (2 if bidirectional else 1), 8)

    def forward(self, x, *state):
        z = torch.tanh(self.fc_in(x))
        if state and isinstance(self.rnn, nn.LSTM):
            seq, _ = self.rnn(z, (state[0], state[1]))
        elif state:
            seq, _ = self.rnn(z, state[0])
        else:
            seq, _ = self.rnn(z)
        return self.fc_out(seq)


class Unrolled(nn.Module):
    """The near miss: an LSTMCell stepped in Python, exported as plain MatMul/Sigmoid/Tanh, no LSTM node."""

    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(F, H)
        self.cell = nn.LSTMCell(H, H)
        self.fc_out = nn.Linear(H, 8)

    def forward(self, x):
        z = torch.tanh(self.fc_in(x))
        h = c = torch.zeros(x.shape[0], H)
        outs = []
        for t in range(x.shape[1]):
            h, c = self.cell(z[:, t], (h, c))
            outs.append(h)
        return self.fc_out(torch.stack(outs, 1))


def case(name, model, batch_first=True, states=0, layers=1, dirs=1, opset=14, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.randn(1, T, F) if batch_first else torch.randn(T, 1, F)
    st = tuple(torch.randn(layers * dirs, 1, H) * 0.5 for _ in range(states))
    names = ["x"] + [f"s{i}" for i in range(states)]
    return Case(name, model, (x, *st), names, ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("lstm", Net())
    yield case("lstm-unrolled", Unrolled(), trigger=False)


def variants():
    torch.manual_seed(0)
    yield case("bias-false", Net(bias=False))
    yield case("seq-first", Net(batch_first=False), batch_first=False)
    yield case("two-layers", Net(layers=2), layers=2)
    yield case("bidirectional", Net(bidirectional=True), dirs=2)
    yield case("with-state", Net(state=True), states=2)
    yield case("bidir-two-layers-state", Net(layers=2, bidirectional=True, state=True), states=2, layers=2, dirs=2)
    yield case("opset17-onnxsim", Net(), opset=17, simplify=True)
    yield case("bias-false-bidirectional", Net(bias=False, bidirectional=True), dirs=2)
    yield case("unrolled-cell", Unrolled())  # near miss: no LSTM node
    yield case("gru", Net(kind="gru"))  # near miss: a GRU node, not an LSTM
