"""KB237: a Trilu whose data is a constant (torch.triu / torch.tril of a tensor built in forward, such as the causal
mask nn.Transformer.generate_square_subsequent_mask makes) stops MNN 3.0.0 at run time with "Reshape error:
144 -> 2"; nn.MultiheadAttention with that mask as attn_mask is where users meet it."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

L, N, E, H = 12, 1, 64, 4  # sequence, batch, embedding, heads: the mask is 12 x 12 = 144 values


class CausalSelfAttention(nn.Module):
    """nn.MultiheadAttention with a causal mask made in forward from the input's length (the trigger: torch's
    tracer writes torch.triu of a constant as an ONNX Trilu whose data input is a Constant). `mask`: "forward"
    (the trigger), "buffer" (made once in __init__, exported as an initializer: the workaround), "input" (fed to
    the model), "none"; `kind`: "float" (-inf above the diagonal, as generate_square_subsequent_mask) or "bool"."""

    def __init__(self, mask="forward", kind="float", batch_first=False, key_padding=False, need_weights=False):
        super().__init__()
        self.att = nn.MultiheadAttention(E, H, batch_first=batch_first)
        self.mask, self.kind, self.batch_first = mask, kind, batch_first
        self.key_padding, self.need_weights = key_padding, need_weights
        if mask == "buffer":
            self.register_buffer("causal", self.causal_mask(L), persistent=False)

    def causal_mask(self, n):
        if self.kind == "bool":
            return torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        return nn.Transformer.generate_square_subsequent_mask(n)  # torch.triu(torch.full((n, n), -inf), 1)

    def forward(self, x, extra=None):
        n = x.shape[1] if self.batch_first else x.shape[0]
        mask = {"forward": lambda: self.causal_mask(n), "buffer": lambda: self.causal,
                "input": lambda: extra, "none": lambda: None}[self.mask]()
        kpm = extra if self.key_padding else None
        return self.att(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=self.need_weights)[0]


def attention(**kw):
    return seeded(CausalSelfAttention, **kw).eval()


def x_in(batch_first=False):
    return randn(N, L, E) if batch_first else randn(L, N, E)


def cases():
    # torch.triu needs opset 14: the ways of opsets 11 and 13 do not export
    yield Case("causal-mask", attention(), (x_in(),), opset=17, dynamo=False,
               ways=["opset15", "opset18", "opset17-onnxsim", "dynamo"])
    yield Case("buffer-mask", attention(mask="buffer"), (x_in(),), opset=17, dynamo=False, rewrites="causal-mask",
               trigger=False)
    yield Case("dynamo-export", attention(), (x_in(),), opset=18, dynamo=True, rewrites="causal-mask",
               trigger=False)
    yield Case("onnxsim", attention(), (x_in(),), opset=17, dynamo=False, simplify=True, rewrites="causal-mask",
               trigger=False)  # onnx-simplifier computes the Trilu of the constant: no Trilu left
    yield Case("no-mask", attention(mask="none"), (x_in(),), opset=17, dynamo=False, trigger=False)


def variants():
    yield Case("batch-first", attention(batch_first=True), (x_in(True),), opset=17, dynamo=False)
    # a float key_padding_mask fed to the model (0 kept, -inf for the padded last position), beside the causal mask
    kpm = torch.zeros(N, L)
    kpm[:, -1] = float("-inf")
    yield Case("key-padding-mask", attention(key_padding=True), (x_in(), kpm), opset=17, dynamo=False)
    yield Case("bool-mask", attention(kind="bool"), (x_in(),), opset=17, dynamo=False)
    yield Case("need-weights", attention(need_weights=True), (x_in(),), opset=17, dynamo=False)
    # the op alone: a constant's upper or lower triangle added to the input
    yield Case("triu-constant-add", Fn(lambda x: x + torch.triu(torch.ones(x.shape[-1], x.shape[-1]), 1)),
               (randn(1, 4, L, L),), opset=17, dynamo=False)
    yield Case("tril-constant-add", Fn(lambda x: x + torch.tril(torch.ones(x.shape[-1], x.shape[-1]), -1)),
               (randn(1, 4, L, L),), opset=14, dynamo=False)
    # near misses: the mask fed to the model (no Trilu), and a Trilu on a computed tensor
    yield Case("mask-input-near-miss", attention(mask="input"), (x_in(), nn.Transformer.generate_square_subsequent_mask(L)),
               opset=17, dynamo=False)
    yield Case("triu-of-input-near-miss", Fn(lambda x: torch.triu(x, 1)), (randn(1, 4, L, L),), opset=17, dynamo=False)
