"""KB244: MNN ignores an ONNX LSTM's sequence_lens (pack_padded_sequence -> nn.LSTM -> pad_packed_sequence).

torch's TorchScript exporter writes the packed LSTM as one LSTM node whose 5th input is Cast(lengths); onnxruntime
zeroes each sequence's steps past its length and takes the final state at its last real step. MNN's converter
drops the input (alibaba/MNN#2731: no dynamic sequence_lens), so the LSTM runs over the padding too.
"""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from kb.export import Case

T, B, I, H = 5, 2, 8, 16  # steps, batch, input features, hidden size
LENS = [5, 3]  # sorted, longest first (enforce_sorted=True); the second sequence has 2 padded steps


class Packed(nn.Module):
    """pack_padded_sequence -> LSTM/GRU -> pad_packed_sequence; returns the padded output (out="y"), or it and the
    final hidden state h_n (out="yh": torch's TorchScript exporter cannot export a packed RNN whose padded output goes
    unused, "vector::_M_range_check" in its ONNX peephole pass)."""

    def __init__(self, kind="lstm", out="y", batch_first=False, bidirectional=False, layers=1, const_lens=None):
        super().__init__()
        self.kind, self.out, self.batch_first, self.const_lens = kind, out, batch_first, const_lens
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = rnn(I, H, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)

    def forward(self, x, *lens):
        lens = torch.tensor(self.const_lens) if self.const_lens else lens[0]
        packed = pack_padded_sequence(x, lens, batch_first=self.batch_first, enforce_sorted=True)
        y, state = self.rnn(packed)
        y = pad_packed_sequence(y, batch_first=self.batch_first)[0]
        if self.out == "yh":
            return y, (state[0] if self.kind == "lstm" else state)
        return y


class Masked(nn.Module):
    """The workaround: the same weights run over the padded batch without packing (no sequence_lens), then the
    steps past each length zeroed (out="y"), and the final state taken at each sequence's last real step (out="yh").
    It needs a unidirectional RNN: a reverse direction would start from the padding."""

    def __init__(self, packed: Packed, out="y"):
        super().__init__()
        self.rnn, self.out = packed.rnn, out

    def forward(self, x, lens):
        y, _ = self.rnn(x)  # (T, B, H): sequence first
        keep = torch.arange(y.shape[0]).unsqueeze(1) < lens.unsqueeze(0)  # (T, B)
        masked = y * keep.unsqueeze(2).to(y.dtype)
        if self.out == "yh":
            last = (lens - 1).view(1, -1, 1).expand(1, y.shape[1], y.shape[2])
            return masked, torch.gather(y, 0, last)  # (1, B, H), as h_n of one layer
        return masked


class Unpacked(nn.Module):
    """Near miss: the same RNN over the padded batch, no packing (the exporter writes no sequence_lens)."""

    def __init__(self, kind="lstm"):
        super().__init__()
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[kind](I, H)

    def forward(self, x):
        return self.rnn(x)[0]


def lens_input_direct(m):
    """As a hand-written graph or another exporter has it: the LSTM's sequence_lens is the int32 model input itself
    (torch writes Cast(Cast(lengths)) in between); the dead Casts are dropped."""
    import onnx

    for i in m.graph.input:
        if i.name == "lens":
            i.type.tensor_type.elem_type = onnx.TensorProto.INT32
    for n in m.graph.node:
        if n.op_type == "LSTM":
            n.input[4] = "lens"
    used = {t for n in m.graph.node for t in n.input} | {o.name for o in m.graph.output}
    while True:
        dead = [n for n in m.graph.node if n.op_type == "Cast" and not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            m.graph.node.remove(n)
        used = {t for n in m.graph.node for t in n.input} | {o.name for o in m.graph.output}


def model(cls, *args, **kw):
    torch.manual_seed(0)
    return cls(*args, **kw).eval()


def inputs(lens=LENS, batch_first=False, t=T):
    torch.manual_seed(1)
    x = torch.randn(len(lens), t, I) if batch_first else torch.randn(t, len(lens), I)
    return x, torch.tensor(lens)


def cases():
    lstm = model(Packed)
    yield Case("lstm", lstm, inputs(), ["x", "lens"], ["y"], opset=14, dynamo=False,
               ways=["opset11", "opset13", "opset15", "opset17", "opset18", "opset13-onnxsim", "opset17-onnxsim"])
    state = model(Packed, out="yh")
    yield Case("lstm-final-state", state, inputs(), ["x", "lens"], ["y", "h"], opset=14, dynamo=False)
    # Controls: the same graph (sequence_lens is still an input, so the trigger is there), fed lengths that leave no
    # step padded: every length equal to the steps given, in a batch of 2 and in a batch of 1 (one sequence alone).
    yield Case("equal-lengths", model(Packed), inputs([5, 5]), ["x", "lens"], ["y"], opset=14, dynamo=False)
    yield Case("one-sequence", model(Packed), inputs([3], t=3), ["x", "lens"], ["y"], opset=14, dynamo=False)
    yield Case("masked", Masked(lstm), inputs(), ["x", "lens"], ["y"], opset=14, dynamo=False, rewrites="lstm",
               trigger=False)
    # The same rewrite through torch 2.13's default exporter (the packed model itself does not export with dynamo=True).
    yield Case("masked-dynamo", Masked(lstm), inputs(), ["x", "lens"], ["y"], opset=18, dynamo=True, rewrites="lstm",
               trigger=False, export_kwargs={"external_data": False})
    yield Case("masked-final-state", Masked(state, out="yh"), inputs(), ["x", "lens"], ["y", "h"], opset=14,
               dynamo=False, rewrites="lstm-final-state", trigger=False)


def variants():
    yield Case("gru", model(Packed, kind="gru"), inputs(), ["x", "lens"], ["y"], opset=14, dynamo=False)
    yield Case("gru-final-state", model(Packed, kind="gru", out="yh"), inputs(), ["x", "lens"], ["y", "h"], opset=14,
               dynamo=False)
    yield Case("bidirectional", model(Packed, bidirectional=True), inputs(), ["x", "lens"], ["y"], opset=14,
               dynamo=False)
    yield Case("batch-first", model(Packed, batch_first=True), inputs(batch_first=True), ["x", "lens"], ["y"],
               opset=14, dynamo=False)
    yield Case("two-layers", model(Packed, layers=2), inputs(), ["x", "lens"], ["y"], opset=14, dynamo=False)
    x, _ = inputs()
    yield Case("const-lengths", model(Packed, const_lens=LENS), (x,), ["x"], ["y"], opset=14, dynamo=False)
    yield Case("lengths-input", model(Packed), inputs(), ["x", "lens"], ["y"], opset=14, dynamo=False,
               edit=lens_input_direct)
    yield Case("unpacked-lstm", model(Unpacked), (x,), ["x"], ["y"], opset=14, dynamo=False)
    yield Case("unpacked-gru", model(Unpacked, kind="gru"), (x,), ["x"], ["y"], opset=14, dynamo=False)
