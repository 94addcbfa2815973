"""KB040: pnnx leaves the ops of attention-mask code unconverted (IsNaN, Cast, Gather with an index
tensor, And); ncnn then refuses the .param: `layer <op> not exists or registered`.

Every model takes the token features x (1, L, D) and a padding mask (1, L) of 0.0 / 1.0 (1 = keep), as
a tokenizer's attention_mask, in float: ncnn's inputs are float.
"""

import torch
from torch import nn
from torch.nn import functional as F

from kb.export import Case

L, D = 8, 16


class Attention(nn.Module):
    """One self-attention layer; `how` is the way its code turns the padding mask into the attention mask."""

    def __init__(self, how):
        super().__init__()
        self.how = how
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)
        # relative position ids for a bias table (T5 / Swin style): a constant index tensor
        self.register_buffer("rel", (torch.arange(L)[None, :] - torch.arange(L)[:, None]).clamp(-3, 3) + 3)
        self.bias_table = nn.Parameter(torch.linspace(-0.5, 0.5, 7))
        self.rel_emb = nn.Parameter(torch.randn(7, D) * 0.1)  # relative position embeddings (Shaw et al., DeBERTa)
        self.register_buffer("causal", torch.tril(torch.ones(L, L)))

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, -1)
        how = self.how
        if how == "sdpa-bool":  # F.scaled_dot_product_attention with a boolean mask: the exporter adds an IsNaN guard
            keep = mask[:, None, None, :].bool()  # (N, heads, L, L) broadcast; one head
            y = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], attn_mask=keep)
            return self.out(y[:, 0])
        scores = q @ k.transpose(-1, -2) * D ** -0.5
        if how == "bert-extended":  # BERT's get_extended_attention_mask: .to(dtype) of a bool / int mask
            ext = mask[:, None, :].bool().to(x.dtype)
            scores = scores + (1.0 - ext) * -10000.0
        elif how == "masked-fill-bool":  # masked_fill with a boolean mask
            scores = scores.masked_fill(~mask[:, None, :].bool(), -10000.0)
        elif how == "logical-and":  # padding mask and causal mask combined with logical_and
            keep = torch.logical_and(mask[:, None, :].bool(), self.causal.bool())
            scores = scores + (1.0 - keep.float()) * -10000.0
        elif how == "rel-bias-gather":  # a relative position bias: table[index tensor]
            scores = scores + self.bias_table[self.rel] + (1.0 - mask[:, None, :]) * -10000.0
        elif how == "rel-gather":  # query-dependent relative positions (DeBERTa's c2p): torch.gather with an index
            c2p = q @ self.rel_emb.T  # (1, L, 7): each query against each relative offset
            scores = scores + torch.gather(c2p, -1, self.rel[None]) + (1.0 - mask[:, None, :]) * -10000.0
        elif how == "arithmetic-rel-gather":  # the workaround: the gather as a batched matmul with a constant one-hot
            c2p = q @ self.rel_emb.T
            onehot = F.one_hot(self.rel, 7).float()  # (L, L, 7), a constant: onehot[i, j, r] = (rel[i, j] == r)
            picked = torch.matmul(onehot, c2p[0][:, :, None]).squeeze(-1)  # [i, j] = c2p[i, rel[i, j]]
            scores = scores + picked[None] + (1.0 - mask[:, None, :]) * -10000.0
        elif how == "isnan-guard":  # a NaN guard after the softmax, as the exporter writes for SDPA
            a = torch.softmax(scores + (1.0 - mask[:, None, :]) * -10000.0, -1)
            a = torch.where(torch.isnan(a), torch.zeros_like(a), a)
            return self.out(a @ v)
        elif how == "arithmetic":  # the workaround: the additive mask from the 0/1 mask with arithmetic only
            scores = scores + (1.0 - mask[:, None, :]) * -10000.0
        elif how == "arithmetic-causal":  # the workaround for logical_and: a product of 0/1 masks
            scores = scores + (1.0 - mask[:, None, :] * self.causal) * -10000.0
        else:
            raise ValueError(how)
        return self.out(torch.softmax(scores, -1) @ v)


class FloatMask(Attention):
    """Near miss: the caller passes the additive float mask (0 or -10000) itself, added directly."""

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, -1)
        scores = q @ k.transpose(-1, -2) * D ** -0.5 + mask[:, None, :]
        return self.out(torch.softmax(scores, -1) @ v)


def inputs(additive=False):
    torch.manual_seed(1)
    x = torch.randn(1, L, D)
    mask = torch.ones(1, L)
    mask[0, -3:] = 0.0  # three padding tokens
    return (x, (1.0 - mask) * -10000.0 if additive else mask)


def model(how, cls=Attention):
    torch.manual_seed(0)  # the same weights whichever cases came before
    m = cls(how).eval()
    return m


def case(name, how, opset=18, dynamo=True, cls=Attention, additive=False, inline=True, **kw):
    if dynamo and inline:
        # The weights inside the .onnx: by default the dynamo exporter writes them to <name>.onnx.data, which
        # pnnx cannot read (it crashes first: see the variant sdpa-bool-external-data)
        kw["export_kwargs"] = {"external_data": False}
    return Case(name, model(how, cls), inputs(additive), ["in0", "in1"], ["out0"], opset=opset, dynamo=dynamo,
                torchscript=True, **kw)


def cases():
    # the default export: torch.onnx.export(..., dynamo=True), opset 18
    yield case("sdpa-bool", "sdpa-bool")
    yield case("bert-extended", "bert-extended")
    yield case("logical-and", "logical-and")
    yield case("isnan-guard", "isnan-guard")
    yield case("rel-gather", "rel-gather")
    # Workarounds: the same weights and inputs, the mask written with arithmetic; judged against the original's torch
    # output.
    yield case("sdpa-bool-arithmetic", "arithmetic", trigger=False, rewrites="sdpa-bool")
    yield case("bert-extended-arithmetic", "arithmetic", trigger=False, rewrites="bert-extended")
    yield case("logical-and-arithmetic", "arithmetic-causal", trigger=False, rewrites="logical-and")
    yield case("rel-gather-arithmetic", "arithmetic-rel-gather", trigger=False, rewrites="rel-gather")
    yield case("isnan-guard-dropped", "arithmetic", trigger=False, rewrites="isnan-guard")
    # Controls: the mask computed outside the model, added directly; a relative position bias looked up in a constant
    # table (Swin, T5) by a constant index tensor: a Gather that pnnx folds into a constant (the dynamo exporter already
    # has), kept by the classic exporter at opset 17.
    yield case("float-mask", None, cls=FloatMask, additive=True, trigger=False)
    yield case("rel-bias-gather", "rel-bias-gather", 17, False, trigger=False)


def variants():
    yield case("sdpa-bool-opset17", "sdpa-bool", 17, False)
    yield case("sdpa-bool-onnxsim", "sdpa-bool", simplify=True)
    yield case("sdpa-bool-external-data", "sdpa-bool", inline=False)  # fails otherwise: pnnx crashes
    yield case("bert-extended-opset17", "bert-extended", 17, False)
    yield case("bert-extended-opset13", "bert-extended", 13, False)
    yield case("masked-fill-bool", "masked-fill-bool")
    yield case("masked-fill-bool-opset17", "masked-fill-bool", 17, False)
    yield case("logical-and-opset17", "logical-and", 17, False)
    yield case("rel-bias-gather-opset13", "rel-bias-gather", 13, False)
    yield case("rel-bias-gather-dynamo", "rel-bias-gather")
    yield case("rel-gather-opset17", "rel-gather", 17, False)
    yield case("isnan-guard-opset13", "isnan-guard", 13, False)
    yield case("isnan-guard-onnxsim", "isnan-guard", simplify=True)
    yield case("float-mask-dynamo", None, cls=FloatMask, additive=True)  # near miss
    yield case("float-mask-opset13", None, 13, False, cls=FloatMask, additive=True)  # near miss
    yield case("arithmetic-mask-opset17", "arithmetic", 17, False)  # near miss: the 0/1 mask with arithmetic
