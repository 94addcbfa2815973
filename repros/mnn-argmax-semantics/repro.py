"""KB074: ONNX ArgMax / ArgMin with select_last_index=1 (the index of the LAST maximum when values tie). MNN
ignores the attribute and returns the first index. torch.argmax returns the first index and its exporters write
select_last_index=0, so the attribute comes from other exporters or hand-written graphs; here a small autograd
Function computes the last index in torch and exports the ONNX op with select_last_index=1."""

import torch
from torch import nn

from kb.export import Case


class ArgLast(torch.autograd.Function):
    """The index of the last maximum (or minimum) along `axis`; exported as ArgMax/ArgMin, select_last_index=1."""

    @staticmethod
    def forward(ctx, x, axis, keepdims, op):
        n = x.shape[axis]
        flipped = x.flip(axis)
        first = flipped.argmax(axis, keepdim=bool(keepdims)) if op == "ArgMax" else \
            flipped.argmin(axis, keepdim=bool(keepdims))
        return (n - 1) - first

    @staticmethod
    def symbolic(g, x, axis, keepdims, op):
        return g.op(op, x, axis_i=axis, keepdims_i=keepdims, select_last_index_i=1)


class Last(nn.Module):
    """argmax (or argmin) with the last index on ties, of scores rounded to integers (so values tie)."""

    def __init__(self, axis=-1, keepdims=1, op="ArgMax", how="onnx-op"):
        super().__init__()
        self.axis, self.keepdims, self.op, self.how = axis, keepdims, op, how

    def forward(self, x):
        s = torch.round(x)
        if self.how == "onnx-op":
            return ArgLast.apply(s, self.axis, self.keepdims, self.op)
        # The workaround: flip the axis and take the first index, (n - 1) - argmax(flip(s)).
        n = s.shape[self.axis]
        f = s.flip(self.axis)
        first = f.argmax(self.axis, keepdim=bool(self.keepdims)) if self.op == "ArgMax" else \
            f.argmin(self.axis, keepdim=bool(self.keepdims))
        return (n - 1) - first


class First(nn.Module):
    """Near miss: torch.argmax / argmin (the first index, select_last_index=0), on the same tied scores."""

    def __init__(self, axis=-1, keepdim=True, op="argmax"):
        super().__init__()
        self.axis, self.keepdim, self.op = axis, keepdim, op

    def forward(self, x):
        return getattr(torch.round(x), self.op)(self.axis, keepdim=self.keepdim)


class Head(nn.Module):
    """A classification head: logits, argmax (keepdims=0), then a Gather of each class's embedding row;
    `last` picks the last of tied classes with ArgMax(select_last_index=1)."""

    def __init__(self, last=True):
        super().__init__()
        self.fc = nn.Linear(8, 6)
        self.table = nn.Parameter(torch.arange(24, dtype=torch.float32).reshape(6, 4))
        self.last = last

    def forward(self, x):
        s = torch.round(self.fc(x))
        i = ArgLast.apply(s, 1, 0, "ArgMax") if self.last else s.argmax(1)
        return self.table[i]


class MaxHead(nn.Module):
    """Near miss: the neighbouring reduction, amax with keepdims=0 feeding a Gather (torch.max(...).values)."""

    def forward(self, x):
        m = torch.round(x).amax(1)
        return m * 2


def scores(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-1, 2, shape, generator=g).float() + 0.1 * torch.rand(shape, generator=g) - 0.05


def cases():
    x = scores(4, 7)
    io = dict(input_names=["in0"], output_names=["out0"], opset=13, dynamo=False)
    yield Case("argmax-last", Last(), (x,), **io)
    yield Case("argmin-last", Last(op="ArgMin"), (x,), **io)
    torch.manual_seed(0)
    head = Head()
    xh = torch.randn(5, 8)
    yield Case("head-last", head, (xh,), **io)
    # Workaround: flip the axis and take the first index; the same inputs.
    yield Case("argmax-last-flip", Last(how="flip"), (x,), trigger=False, rewrites="argmax-last", **io)
    yield Case("argmin-last-flip", Last(op="ArgMin", how="flip"), (x,), trigger=False, rewrites="argmin-last", **io)
    # Control: the first index (torch.argmax), on the same tied scores.
    yield Case("argmax-first", First(), (x,), trigger=False, **io)


def variant(name, module, x, opset=13, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    x2, x3, x4 = scores(4, 7, seed=1), scores(2, 5, 6, seed=2), scores(1, 3, 4, 5, seed=3)
    yield variant("last-3d-axis1", Last(axis=1), x3)
    yield variant("last-4d-channels", Last(axis=1), x4)
    yield variant("last-keepdims0", Last(keepdims=0), x3)
    yield variant("last-axis0", Last(axis=0), x2)
    yield variant("last-opset17", Last(), x3, opset=17)
    yield variant("last-opset11", Last(), x2, opset=11)
    yield variant("argmin-last-4d", Last(axis=1, op="ArgMin"), x4)
    torch.manual_seed(0)
    yield variant("head-last-opset17", Head(), torch.randn(5, 8), opset=17)
    # Near misses: the first index, as torch writes it (select_last_index=0), and the neighbouring reduction.
    yield variant("first-near-miss", First(axis=1), x3)
    yield variant("first-keepdims0-near-miss", First(keepdim=False), x3)
    yield variant("first-dynamo-near-miss", First(axis=1), x4, opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
    yield variant("argmin-first-dynamo-near-miss", First(keepdim=False, op="argmin"), x3, opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
    torch.manual_seed(0)
    yield variant("head-first-near-miss", Head(last=False), torch.randn(5, 8))
    yield variant("amax-keepdims0-near-miss", MaxHead(), x3)
