"""KB006: an LSTM or GRU run through MNN's Session API (Interpreter.createSession / runSession).

From MNN 3.4 the converter turns recurrent layers into a `While` subgraph, which the Session API cannot
resize; the Module API (MNN.nn.load_module_from_file) runs the same file.
"""

import torch
from torch import nn

from kb.export import Case

T, F, H = 6, 8, 16  # sequence length, features, hidden size


class Net(nn.Module):
    """Linear -> LSTM -> Linear: the smallest sequence model."""

    def __init__(self, kind="lstm", layers=1, bidirectional=False, act=None, state=False):
        super().__init__()
        self.kind, self.act, self.state = kind, act, state
        self.fc_in = nn.Linear(F, H)
        if kind == "conv":  # the near miss: a temporal convolution, no recurrent layer
            self.rnn = nn.Conv1d(H, H, 3, padding=1)
        else:
            cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
            self.rnn = cls(H, H, num_layers=layers, batch_first=True, bidirectional=bidirectional)
        self.fc_out = nn.Linear(H * (2 if bidirectional else 1), 4)

    def forward(self, x, *state):
        z = self.fc_in(x)
        if self.act == "relu":
            z = torch.relu(z)
        elif self.act == "silu":
            z = nn.functional.silu(z)
        if self.kind == "conv":
            seq = self.rnn(z.transpose(1, 2)).transpose(1, 2)
        elif self.kind == "lstm" and state:
            seq, _ = self.rnn(z, (state[0], state[1]))
        else:
            seq, _ = self.rnn(z, *state)
        return self.fc_out(seq)


def case(name, model, states=(), opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.randn(1, T, F)
    st = tuple(torch.randn(*s) * 0.5 for s in states)
    names = ["x"] + [f"s{i}" for i in range(len(st))]
    return Case(name, model, (x, *st), names, ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("lstm", Net("lstm"))
    yield case("gru", Net("gru"))
    yield case("conv-control", Net("conv"), trigger=False)


def variants():
    torch.manual_seed(0)
    yield case("lstm-relu", Net("lstm", act="relu"))
    yield case("gru-silu", Net("gru", act="silu"))
    yield case("lstm-two-layers", Net("lstm", layers=2))
    yield case("lstm-bidirectional", Net("lstm", bidirectional=True))
    yield case("lstm-h0-c0", Net("lstm", state=True), [(1, 1, H), (1, 1, H)])
    yield case("gru-h0", Net("gru", state=True), [(1, 1, H)])
    yield case("rnn-tanh", Net("rnn"))
    yield case("lstm-opset17", Net("lstm"), opset=17)
    yield case("gru-onnxsim", Net("gru"), simplify=True)
    yield case("gru-dynamo", Net("gru"), opset=18, dynamo=True)  # (an LSTM exported with dynamo=True crashes mnnconvert)
    yield case("conv1d-near-miss", Net("conv"))
