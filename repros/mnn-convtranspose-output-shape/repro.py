"""KB009: an ONNX ConvTranspose that states `output_shape` (and no pads), converted to MNN.

torch never writes `output_shape` itself (it exports pads and output_padding), but other exporters and
graph tools do. Here a small autograd Function writes the node the way they do, with the TorchScript
exporter; its forward computes what ONNX specifies for it: the total padding
stride * (in - 1) + kernel - out is split with the larger half at the start (auto_pad NOTSET).
"""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case


def _split(size, k, stride, out):
    total = stride * (size - 1) + k - out
    return total - total // 2, total // 2  # begin, end (ONNX: NOTSET puts the odd one at the start)


class DeconvOutputShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, stride, out_hw):
        k = w.shape[-1]
        pads = [_split(x.shape[2 + i], k, stride, out_hw[i]) for i in range(2)]
        # torch crops `padding` at both ends and adds `output_padding` back at the end only.
        padding = [p[0] for p in pads]
        output_padding = [p[0] - p[1] for p in pads]
        return F.conv_transpose2d(x, w, b, stride=stride, padding=padding, output_padding=output_padding)

    @staticmethod
    def symbolic(g, x, w, b, stride, out_hw):
        k = w.type().sizes()[-1]
        return g.op("ConvTranspose", x, w, b, kernel_shape_i=[k, k], strides_i=[stride, stride],
                    output_shape_i=list(out_hw))


class Deconv(nn.Module):
    """A stride-s ConvTranspose whose output size is stated, as decoders do to match a skip connection."""

    def __init__(self, cin=4, cout=4, k=3, stride=2, out_hw=(16, 16), explicit=False, before=None, after=None,
                 layers=1):
        super().__init__()
        self.stride, self.out_hw, self.explicit, self.before, self.after = stride, out_hw, explicit, before, after
        self.layers = nn.ModuleList(nn.ConvTranspose2d(cin if i == 0 else cout, cout, k, stride=stride)
                                    for i in range(layers))
        self.conv = nn.Conv2d(cin, cin, 1)

    def forward(self, x):
        if self.before == "conv-relu":
            x = torch.relu(self.conv(x))
        for i, d in enumerate(self.layers):
            size = tuple(self.out_hw) if i == len(self.layers) - 1 else tuple(2 * int(s) for s in x.shape[2:])
            if self.explicit:  # the workaround: pads stated, torch exports pads + output_padding
                pads = [_split(x.shape[2 + j], d.kernel_size[0], self.stride, size[j]) for j in range(2)]
                x = F.conv_transpose2d(x, d.weight, d.bias, stride=self.stride, padding=[p[0] for p in pads],
                                       output_padding=[p[0] - p[1] for p in pads])
            else:
                x = DeconvOutputShape.apply(x, d.weight, d.bias, self.stride, size)
            if self.after == "relu":
                x = torch.relu(x)
            elif self.after == "sigmoid":
                x = torch.sigmoid(x)
        return x


def case(name, model, hw=(8, 8), cin=4, opset=13, **kw):
    torch.manual_seed(0)
    return Case(name, model, (torch.randn(1, cin, *hw),), ["x"], ["y"], opset=opset, dynamo=False, **kw)


def cases():
    torch.manual_seed(0)
    # 8 -> 16 with k=3, s=2: total padding 2*7 + 3 - 16 = 1, odd: ONNX puts it at the start.
    original = Deconv()
    yield case("output-shape", original)
    # The workaround: the same layer (same weights, same input) exported with pads and output_padding.
    rewrite = Deconv(explicit=True)
    rewrite.load_state_dict(original.state_dict())
    yield case("explicit-pads", rewrite, trigger=False, rewrites="output-shape")


def variants():
    torch.manual_seed(0)
    yield case("relu-after", Deconv(after="relu"))
    yield case("conv-relu-before", Deconv(before="conv-relu"))
    yield case("two-layers", Deconv(layers=2, out_hw=(32, 32)))
    yield case("kernel5-total3", Deconv(k=5, out_hw=(16, 16)))  # 14 + 5 - 16 = 3
    yield case("non-square", Deconv(out_hw=(16, 20)), hw=(8, 10))  # 1 and 1
    yield case("stride3", Deconv(stride=3, k=4, out_hw=(24, 24)))  # 21 + 4 - 24 = 1
    yield case("opset17", Deconv(), opset=17)
    yield case("onnxsim", Deconv(after="sigmoid"), simplify=True)
    yield case("explicit-pads-near-miss", Deconv(explicit=True))
    yield case("explicit-pads-two-layers-near-miss", Deconv(explicit=True, layers=2, out_hw=(32, 32)))
