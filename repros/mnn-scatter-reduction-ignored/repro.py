"""KB097: a scatter with a reduction (scatter_add, scatter_reduce, index_add, index_put(accumulate=True))
exports to ONNX ScatterElements / ScatterND with reduction=add|mul|max|min. MNN does not combine the
updates that land on the same index: where an index repeats, the result is not their sum (max, min,
product)."""

import torch
from torch import nn

from kb.export import Case

N, R, F = 16, 4, 8  # updates, output rows, features


class Scatter(nn.Module):
    """Linear features, then pooled into R rows by a fixed index with repeats (a graph or point-cloud
    aggregation): scatter_add, scatter_reduce, index_add or index_put(accumulate=True)."""

    def __init__(self, kind="scatter_add", unique=False):
        super().__init__()
        self.kind = kind
        self.fc = nn.Linear(F, F)
        torch.manual_seed(5)
        idx = torch.randint(0, R, (1, N, F))
        rows = torch.randint(0, R, (N,))
        if unique:  # every output position written at most once
            idx = torch.cat([torch.stack([torch.randperm(R) for _ in range(F)], 1).unsqueeze(0)] * (N // R), 1)
            rows = torch.randperm(R)
        self.register_buffer("idx", idx)
        self.register_buffer("rows", rows)

    def forward(self, x):
        v = self.fc(x)  # [1, N, F]
        base = torch.zeros(1, R, F)
        k = self.kind
        if k == "scatter_add":
            return base.scatter_add(1, self.idx, v)
        if k == "scatter_add_dim0":  # 2-D, along dim 0, as graph networks sum messages into nodes
            return base[0].scatter_add(0, self.rows.unsqueeze(1).expand(N, F), v[0])
        if k == "onehot":  # the workaround: the same sum as a one-hot mask, multiplied and summed
            hit = (self.idx.unsqueeze(-1) == torch.arange(R)).to(v.dtype)  # [1, N, F, R]
            return (hit * v.unsqueeze(-1)).sum(1).transpose(1, 2)
        if k in ("amax", "amin", "prod"):
            return base.scatter_reduce(1, self.idx, v, k)
        if k == "scatter":  # no reduction; the index never repeats within a column
            return base.scatter(1, self.idx[:, :R], v[:, :R])
        if k == "index_add":
            return base[0].index_add(0, self.rows, v[0])
        if k == "index_put":  # accumulate=True
            return base[0].index_put((self.rows,), v[0], accumulate=True)
        if k == "index_put_unique":  # no accumulation; the rows are distinct
            return base[0].index_put((self.rows[:R],), v[0, :R])
        raise ValueError(k)


def scatter(seed=0, **kw):
    torch.manual_seed(seed)
    return Scatter(**kw).eval()


def tokens(seed=1):
    torch.manual_seed(seed)
    return torch.randn(1, N, F)


def cases():
    x = tokens()
    model = scatter()
    yield Case("scatter-add", model, (x,), ["x"], ["y"], opset=17, dynamo=False)
    onehot = scatter(kind="onehot")
    onehot.load_state_dict(model.state_dict())
    yield Case("scatter-add-onehot", onehot, (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False,
               rewrites="scatter-add")
    # Control: a scatter without reduction, whose index does not repeat within a column.
    yield Case("scatter-plain", scatter(kind="scatter", unique=True), (x,), ["x"], ["y"], opset=17, dynamo=False,
               trigger=False)


def variants():
    # The dynamo exporter's ScatterElements also loses its axis in MNN (another bug), so the ScatterElements
    # variants use the TorchScript exporter; index_add and index_put export to ScatterND, which has no axis.
    x = tokens(seed=2)
    yield Case("scatter-add-opset16", scatter(seed=3), (x,), ["x"], ["y"], opset=16, dynamo=False)
    yield Case("scatter-add-onnxsim", scatter(seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("scatter-add-dim0", scatter(seed=3, kind="scatter_add_dim0"), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("scatter-amax", scatter(seed=3, kind="amax"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("scatter-amin", scatter(seed=3, kind="amin"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("scatter-prod", scatter(seed=3, kind="prod"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("index-add-dynamo", scatter(seed=3, kind="index_add"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("index-put-accumulate-dynamo", scatter(seed=3, kind="index_put"), (x,), ["x"], ["y"], opset=18,
               dynamo=True)
    # Near misses: no reduction, the index does not repeat.
    yield Case("scatter-plain-near-miss", scatter(seed=3, kind="scatter", unique=True), (x,), ["x"], ["y"],
               opset=17, dynamo=False)
    yield Case("index-put-near-miss", scatter(seed=3, kind="index_put_unique", unique=True), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
