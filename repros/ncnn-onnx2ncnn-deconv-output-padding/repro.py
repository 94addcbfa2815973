"""KB047: ConvTranspose output sizes through onnx2ncnn and ncnn.

torch exports ConvTranspose2d(output_padding=...) as pads + output_padding, which onnx2ncnn and ncnn
handle (the near misses). A ConvTranspose that states `output_shape` instead (written by other
exporters and graph tools, never by torch) is written as Deconvolution 20=/21= without pads, and ncnn
crashes on it; with pads as well, ncnn ignores output_shape. An autograd Function writes that node here,
and its forward computes what ONNX specifies (auto_pad NOTSET: the odd pixel of padding at the start;
SAME_UPPER: at the end; output_shape overrides pads).
"""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C_IN, C_OUT = 4, 6


def split(size, k, stride, out, upper=False):
    """(begin, end) padding that gives `out` pixels; ONNX NOTSET puts the odd pixel at the start."""
    total = stride * (size - 1) + k - out
    small, big = total // 2, total - total // 2
    return (small, big) if upper else (big, small)


class OutputShapeDeconv(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, stride, out_hw, mode):
        k = w.shape[-1]
        pads = [split(x.shape[2 + i], k, stride, out_hw[i], upper=mode == "same-upper") for i in range(2)]
        y = F.conv_transpose2d(x, w, b, stride=stride)  # full size, then crop begin/end as ONNX says
        return y[:, :, pads[0][0]:y.shape[2] - pads[0][1], pads[1][0]:y.shape[3] - pads[1][1]]

    @staticmethod
    def symbolic(g, x, w, b, stride, out_hw, mode):
        k = w.type().sizes()[-1]
        kw = dict(kernel_shape_i=[k, k], strides_i=[stride, stride], output_shape_i=list(out_hw))
        if mode == "with-pads":  # pads stated too; ONNX says output_shape wins
            kw["pads_i"] = [1, 1, 1, 1]
        elif mode == "same-upper":
            kw["auto_pad_s"] = "SAME_UPPER"
        return g.op("ConvTranspose", x, w, b, **kw)


class Deconv(nn.Module):
    """Decoder upsampling: a stride-s ConvTranspose2d whose output size is stated (to match a skip connection)."""

    def __init__(self, k=3, stride=2, out_hw=(16, 16), mode="output-shape", layers=1, before=False, after=None):
        super().__init__()
        torch.manual_seed(0)
        self.ups = nn.ModuleList(nn.ConvTranspose2d(C_IN if i == 0 else C_OUT, C_OUT, k, stride=stride)
                                 for i in range(layers))
        self.conv = nn.Conv2d(C_IN, C_IN, 1) if before else None
        self.stride, self.out_hw, self.mode, self.after = stride, out_hw, mode, after

    def forward(self, x):
        if self.conv is not None:
            x = torch.relu(self.conv(x))
        for i, up in enumerate(self.ups):
            last = i == len(self.ups) - 1
            size = tuple(self.out_hw) if last else tuple(2 * int(s) for s in x.shape[2:])
            if self.mode == "explicit":  # what torch writes: padding + output_padding
                pads = [split(x.shape[2 + j], up.kernel_size[0], self.stride, size[j]) for j in range(2)]
                if any(b != e for b, e in pads):  # torch can only crop evenly: the odd pixel goes to the end
                    pads = [split(x.shape[2 + j], up.kernel_size[0], self.stride, size[j], upper=True)
                            for j in range(2)]
                x = F.conv_transpose2d(x, up.weight, up.bias, stride=self.stride, padding=[p[0] for p in pads],
                                       output_padding=[p[1] - p[0] for p in pads])
            else:
                x = OutputShapeDeconv.apply(x, up.weight, up.bias, self.stride, size, self.mode)
            if self.after == "relu":
                x = torch.relu(x)
        return x


def x_in(hw=(8, 8)):
    torch.manual_seed(1)
    return torch.randn(1, C_IN, *hw)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    # 8 -> 16 with k=4, s=2: total padding 2*7 + 4 - 16 = 2, one pixel at each end.
    yield Case("output-shape", Deconv(k=4), (x_in(),), opset=13, dynamo=False, **IO)
    # The workaround: the same layer (same seed, weights and input) exported the torch way, padding=1.
    yield Case("explicit-pads", Deconv(k=4, mode="explicit"), (x_in(),), opset=13, dynamo=False, trigger=False,
               rewrites="output-shape", **IO)
    # Control: Tencent/ncnn#1053's layer, ConvTranspose2d(k=3, s=2, padding=1, output_padding=1).
    torch.manual_seed(0)
    yield Case("output-padding", nn.ConvTranspose2d(C_IN, C_OUT, 3, 2, padding=1, output_padding=1), (x_in(),),
               opset=13, dynamo=False, trigger=False, **IO)


def variants():
    yield Case("opset13", Deconv(k=4), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("opset17", Deconv(k=4), (x_in(),), opset=17, dynamo=False, **IO)
    yield Case("odd-padding", Deconv(k=3), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("relu-after", Deconv(after="relu"), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("conv-relu-before", Deconv(before=True), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("two-layers", Deconv(layers=2, out_hw=(32, 32)), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("non-square", Deconv(out_hw=(16, 20)), (x_in((8, 10)),), opset=13, dynamo=False, **IO)
    yield Case("onnxsim", Deconv(after="relu"), (x_in(),), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("with-pads", Deconv(mode="with-pads"), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("same-upper-near-miss", Deconv(mode="same-upper"), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("output-padding-near-miss", Deconv(mode="explicit"), (x_in(),), opset=13, dynamo=False, **IO)
    yield Case("output-padding-dynamo-near-miss", Deconv(mode="explicit"), (x_in(),), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)
    yield Case("output-padding-two-layers-near-miss", Deconv(mode="explicit", layers=2, out_hw=(32, 32)),
               (x_in(),), opset=13, dynamo=False, **IO)
