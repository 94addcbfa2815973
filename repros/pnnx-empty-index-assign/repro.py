"""KB224: a hand-written expand (pnnx/pnnx#104): a buffer made by torch.empty((n,) + t.size()), filled by
out[i] = t.clone() in a Python loop, traced and converted by pnnx from TorchScript. The in-place copies into the
buffer do not survive: older pnnx folds the buffer as a constant (the output no longer depends on the input), newer
pnnx prints "slice_copy along batch axis is not supported" and ncnn returns another shape."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class Expand(nn.Module):
    """A conv, a spatial mean (t of shape (1, 4)), n copies of t, then a Linear(4, 8).

    how="empty": torch.empty((n,) + t.size()), out[i] = t.clone() (the thread's custom_expand);
    "zeros": the same into torch.zeros; "empty-axis1": torch.empty((1, n, 4)), out[:, i] = t (another axis);
    "expand": t.unsqueeze(0).expand(n, 1, 4); "repeat": t.unsqueeze(0).repeat(n, 1, 1);
    "cat": torch.cat([t.unsqueeze(0)] * n); "stack": torch.stack([t] * n) (not measured here: pnnx 20261020
    gives ncnn an output of shape (1, 8) for it, another fault).
    """

    def __init__(self, how="empty", n=3, four_d=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.fc = nn.Linear(4, 8)
        self.how, self.n, self.four_d = how, n, four_d

    def custom_expand(self, t, n, buffer):
        out = buffer((n,) + t.size())
        for i in range(n):
            out[i] = t.clone()
        return out

    def forward(self, x):
        y = self.conv(x)
        t = y if self.four_d else y.mean((2, 3))
        n = self.n
        if self.how == "empty":
            z = self.custom_expand(t, n, torch.empty)
        elif self.how == "zeros":
            z = self.custom_expand(t, n, torch.zeros)
        elif self.how == "empty-axis1":
            z = torch.empty((1, n) + t.size()[1:])
            for i in range(n):
                z[:, i] = t.clone()
        elif self.how == "stack":
            z = torch.stack([t] * n)
        elif self.how == "expand":
            z = t.unsqueeze(0).expand((n,) + t.size())
        elif self.how == "repeat":
            z = t.unsqueeze(0).repeat((n,) + (1,) * t.dim())
        elif self.how == "cat":
            z = torch.cat([t.unsqueeze(0)] * n)
        else:
            raise ValueError(self.how)
        if self.four_d:
            return z * 2
        return self.fc(z)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 8)
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    base = seeded(lambda: Expand("empty"))
    yield Case("empty-expand", base, (x,), **io)
    for how in ("expand", "repeat", "cat"):
        m = Expand(how)
        m.load_state_dict(base.state_dict())
        yield Case(f"as-{how}", m, (x,), rewrites="empty-expand", trigger=False, **io)


def variant(name, module, x, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True, **kw)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 8, 8)
    m = lambda how, **kw: seeded(lambda: Expand(how, **kw))  # noqa: E731
    yield variant("empty-n3", m("empty"), x)
    yield variant("empty-n2", m("empty", n=2), x)
    yield variant("empty-n4", m("empty", n=4), x)
    yield variant("empty-n1", m("empty", n=1), x)
    yield variant("zeros-n3", m("zeros"), x)
    yield variant("empty-4d", m("empty", four_d=True), x)
    yield variant("zeros-4d", m("zeros", four_d=True), x)
    yield variant("empty-axis1", m("empty-axis1"), x)
    yield variant("expand-near-miss", m("expand"), x)
    yield variant("repeat-near-miss", m("repeat"), x)
    yield variant("cat-near-miss", m("cat"), x)
