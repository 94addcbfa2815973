"""KB071: pnnx prints "binaryop broadcast across batch axis 1 and 0 is not supported" when a LayerNorm feeds a
sequence-first (batch_first=False) nn.MultiheadAttention / GRU / LSTM and the block adds its input back.

pnnx's ncnn passes give every blob a batch axis: LayerNorm's is 0, a batch_first=False attention or RNN's
is 1. The residual Add then joins an axis-0 blob with an axis-1 one; pnnx prints the line, leaves the Add
as it is, and ncnn adds the wrong elements.
"""

import torch
from torch import nn

from kb.export import Case

T, B, D = 8, 1, 16  # (T, B, D): the sequence-first layout of torch's attention and RNN modules


class Block(nn.Module):
    """norm -> mixer -> + input, the pre-norm residual block of transformers and conformers.

    norm: "ln" (nn.LayerNorm), "ln-bt" (the same LayerNorm taken in the (B, T, D) layout: the workaround),
    "relu" or "linear" (near misses); mixer: "mha", "gru" or "lstm", all batch_first=False. Every kind
    builds the same modules in the same order, so one seed gives them the same weights.
    """

    def __init__(self, norm="ln", mixer="mha"):
        super().__init__()
        self.norm_kind, self.mixer_kind = norm, mixer
        self.ln = nn.LayerNorm(D)
        self.linear = nn.Linear(D, D)
        if mixer == "mha":
            self.mixer = nn.MultiheadAttention(D, 4)
        else:
            self.mixer = (nn.GRU if mixer == "gru" else nn.LSTM)(D, D)

    def norm(self, x):
        if self.norm_kind == "ln":
            return self.ln(x)
        if self.norm_kind == "ln-bt":
            return self.ln(x.transpose(0, 1)).transpose(0, 1)
        return torch.relu(x) if self.norm_kind == "relu" else self.linear(x)

    def forward(self, x):  # x: (T, B, D)
        y = self.norm(x)
        y = self.mixer(y, y, y, need_weights=False)[0] if self.mixer_kind == "mha" else self.mixer(y)[0]
        return y + x


class Encoder(nn.Module):
    """The conformer layout of bench/arch: features (B, T, F) -> Linear -> (T, B, D) -> the pre-norm
    attention block -> (B, T, D)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(12, D)
        self.block = Block()

    def forward(self, features):
        return self.block(self.proj(features).transpose(0, 1)).transpose(0, 1)


def block(**kw):
    torch.manual_seed(0)
    return Block(**kw).eval()


def encoder():
    torch.manual_seed(0)
    return Encoder().eval()


def case(name, model, shape=(T, B, D), opset=17, dynamo=False, **kw):
    torch.manual_seed(1)  # the same input tensors for a case and its workaround
    return Case(name, model, (torch.randn(*shape),), ["in0"], ["out0"], opset=opset, dynamo=dynamo,
                torchscript=True, **kw)


def cases():
    yield case("ln-mha", block())
    yield case("ln-gru", block(mixer="gru"))
    # Controls on the same path: no LayerNorm before the attention, so nothing pins batch axis 0.
    yield case("relu-mha", block(norm="relu"), trigger=False)
    yield case("linear-mha", block(norm="linear"), trigger=False)
    # The workaround: the same weights, the LayerNorm taken in the (B, T, D) layout.
    yield case("ln-bt-mha", block(norm="ln-bt"), trigger=False, rewrites="ln-mha")
    yield case("ln-bt-gru", block(norm="ln-bt", mixer="gru"), trigger=False, rewrites="ln-gru")


def variants():
    yield case("ln-mha", block())
    yield case("ln-mha-opset18", block(), opset=18)
    yield case("ln-mha-batch2", block(), shape=(T, 2, D))
    yield case("ln-gru", block(mixer="gru"))
    yield case("ln-lstm", block(mixer="lstm"))
    yield case("encoder", encoder(), shape=(1, T, 12))  # inside a realistic block
    yield case("relu-mha", block(norm="relu"))  # near miss: no LayerNorm
    yield case("linear-mha", block(norm="linear"))  # near miss: a Linear instead
    yield case("relu-gru", block(norm="relu", mixer="gru"))  # near miss
    yield case("ln-bt-mha", block(norm="ln-bt"))  # near miss: the workaround
    yield case("ln-bt-gru", block(norm="ln-bt", mixer="gru"))  # near miss: the workaround
    # Below opset 17 torch writes nn.LayerNorm as ReduceMean, Sub, Pow, ... Div, Mul, Add: pnnx from ONNX
    # fuses them back into a LayerNorm (test_checks.py measures these from the ONNX file).
    yield case("ln-mha-opset14", block(), opset=14)
    yield case("ln-gru-opset14", block(mixer="gru"), opset=14)
    yield case("ln-mha-opset14-sim", block(), opset=14, simplify=True)
    yield case("relu-mha-opset14", block(norm="relu"), opset=14)  # near miss
    yield case("ln-bt-mha-opset14", block(norm="ln-bt"), opset=14)  # near miss: the workaround
