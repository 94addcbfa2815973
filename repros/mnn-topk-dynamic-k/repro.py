"""KB029: regression guard for alibaba/MNN#1709, #1651 -- TopK whose k is computed from a dynamic shape."""

import torch
from torch import nn

from kb.export import Case

N = 40  # candidates


class TopK(nn.Module):
    """Keep the best scores; k comes from the input's size, as in detection heads (k = min(K, n), n // 4)."""

    def __init__(self, k="quarter", largest=True, dim=-1, pre=None):
        super().__init__()
        self.k, self.largest, self.dim, self.pre = k, largest, dim, pre

    def forward(self, x):
        n = x.shape[self.dim]
        k = {"quarter": lambda: n // 4, "min": lambda: min(n, 10) if isinstance(n, int) else torch.clamp(n, max=10),
             "const": lambda: 10}[self.k]()
        if self.pre == "sigmoid":
            x = torch.sigmoid(x)
        values, indices = torch.topk(x, k, dim=self.dim, largest=self.largest)
        return values, indices


def case(name, model, shape=(1, N), dynamic=True, opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.randn(*shape)
    if dynamic and not dynamo:
        axis = len(shape) - 1 if model.dim == -1 else model.dim
        kw["export_kwargs"] = {"dynamic_axes": {"x": {axis: "n"}}}
    return Case(name, model, (x,), ["x"], ["values", "indices"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    yield case("topk-dynamic-k", TopK())
    yield case("topk-const-k", TopK("const"), trigger=False)  # control: k is a constant
    yield case("topk-static-shape", TopK(), dynamic=False, trigger=False)  # control: n // 4 folded to a constant


def variants():
    torch.manual_seed(0)
    yield case("quarter", TopK())
    yield case("smallest", TopK(largest=False))
    yield case("sigmoid-scores", TopK(pre="sigmoid"))
    yield case("dim1-of-3d", TopK(dim=1), shape=(1, N, 4))
    yield case("opset11", TopK(), opset=11)
    yield case("opset17-onnxsim", TopK(), opset=17, simplify=True)
    yield case("dynamo-static", TopK(), opset=18, dynamo=True)
    yield case("const-k", TopK("const"))  # near miss: k is a constant
    yield case("static-shape", TopK(), dynamic=False)  # near miss: the exporter folds n // 4
