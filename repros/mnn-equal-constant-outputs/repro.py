"""KB227: two model outputs that are constants of the same value and shape (zero initial states), in MNN 3.0.0
(alibaba/MNN#2911: an encoder with outputs cell, hid, init_query and memory)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

NAMES = ["cell", "hid", "init_query", "memory"]


class Encoder(nn.Module):
    """An encoder (a Linear, or a GRU as in the thread) that also returns a decoder's initial states (cell, hid) and a learned query, as the thread's
    model does. `states` makes the two states: "zeros" (both torch.zeros, the trigger), "ones", "zeros-like"
    (zeros_like of an input slice, which the tracer writes as a constant too), "distinct" (zeros and ones),
    "shape-differ" (equal zeros of two shapes), "one-computed" (zeros and a computed tensor)."""

    def __init__(self, states="zeros", rnn=False):
        super().__init__()
        self.states = states
        self.rnn = nn.GRU(64, 32) if rnn else nn.Linear(64, 32)
        self.query = nn.Parameter(torch.randn(1, 16), requires_grad=False)  # a learned query, frozen for inference

    def forward(self, x):
        memory = self.rnn(x)[0] if isinstance(self.rnn, nn.GRU) else self.rnn(x)
        if self.states == "zeros":
            hid, cell = torch.zeros(2, 1, 64), torch.zeros(2, 1, 64)
        elif self.states == "ones":
            hid, cell = torch.ones(2, 1, 64), torch.ones(2, 1, 64)
        elif self.states == "zeros-like":
            hid, cell = torch.zeros_like(x[:2]), torch.zeros_like(x[:2])
        elif self.states == "distinct":
            hid, cell = torch.zeros(2, 1, 64), torch.ones(2, 1, 64)
        elif self.states == "shape-differ":
            hid, cell = torch.zeros(2, 1, 64), torch.zeros(1, 2, 64)
        else:  # one-computed
            hid, cell = torch.zeros(2, 1, 64), memory[:2].repeat(1, 1, 2)
        return cell, hid, self.query, memory


def model(states="zeros", rnn=False):
    return seeded(Encoder, states, rnn).eval()


def cases():
    x = randn(20, 1, 64)
    yield Case("two-zero-states", model(), (x,), ["x"], ["cell", "hid", "init_query", "memory"], opset=14,
               dynamo=False, ways=True)
    # Workaround: torch 2.13's default export (dynamo, weights in an external data file beside the .onnx). The
    # same export with the weights inside the file (variant two-zero-states-dynamo) fails as the case does.
    yield Case("external-data", model(), (x,), ["x"], ["cell", "hid", "init_query", "memory"], opset=18,
               dynamo=True, export_kwargs={"external_data": True}, rewrites="two-zero-states")
    yield Case("distinct-states", model("distinct"), (x,), ["x"], ["cell", "hid", "init_query", "memory"], opset=14,
               dynamo=False, trigger=False)


def variants():
    x = randn(20, 1, 64)
    yield Case("ones-states", model("ones"), (x,), ["x"], ["cell", "hid", "init_query", "memory"], opset=14,
               dynamo=False)
    yield Case("zeros-like-input", model("zeros-like"), (x,), ["x"], ["cell", "hid", "init_query", "memory"],
               opset=14, dynamo=False)
    yield Case("no-constant-folding", model(), (x,), ["x"], ["cell", "hid", "init_query", "memory"], opset=14,
               dynamo=False, export_kwargs={"do_constant_folding": False})
    yield Case("gru-encoder", model(rnn=True), (x,), ["x"], ["cell", "hid", "init_query", "memory"], opset=14,
               dynamo=False)
    # Near misses: the two constants differ in value or in shape, or one state is computed from the input.
    yield Case("distinct-values-near-miss", model("distinct"), (x,), ["x"], ["cell", "hid", "init_query", "memory"],
               opset=17, dynamo=False)
    yield Case("shape-differ-near-miss", model("shape-differ"), (x,), ["x"], ["cell", "hid", "init_query", "memory"],
               opset=14, dynamo=False)
    yield Case("one-computed-near-miss", model("one-computed"), (x,), ["x"], ["cell", "hid", "init_query", "memory"],
               opset=14, dynamo=False)
