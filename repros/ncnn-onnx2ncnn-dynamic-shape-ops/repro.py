"""known-bug: Tencent/ncnn#833 -- shapes computed at run time (view(x.size(0), -1), interpolate(size=...))
export as Shape ops, which onnx2ncnn cannot convert: "Shape not supported yet!"."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, H = 4, 8  # conv channels, input height and width
BATCH = {"in0": {0: "batch"}, "out0": {0: "batch"}}  # the dynamic batch axis users ask torch.onnx.export for


class ViewHead(nn.Module):
    """The classifier head of many CNNs: flatten with view(x.size(0), -1), then a Linear."""

    def __init__(self, how="view"):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.fc = nn.Linear(C * H * H, 5)
        self.how = how

    def forward(self, x):
        y = torch.relu(self.conv(x))
        if self.how == "view":
            y = y.view(y.size(0), -1)
        elif self.how == "view-bc":  # (batch, channels, pixels), summed over the pixels
            return y.view(y.size(0), y.size(1), -1).sum(2)
        elif self.how == "flatten":  # near miss: an ONNX Flatten, no shape arithmetic
            y = torch.flatten(y, 1)
        elif self.how == "constant":  # near miss: the batch written as a number
            y = y.reshape(1, -1)
        return self.fc(y)


class Upsample(nn.Module):
    """Upsampling to a size read from a tensor: FPN / U-Net decoders, and interpolate(size=...)."""

    def __init__(self, how="double"):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.how = how

    def forward(self, x):
        y = self.conv(x)
        if self.how == "double":  # size from the tensor's own shape
            return F.interpolate(y, size=(y.shape[2] * 2, y.shape[3] * 2), mode="nearest")
        if self.how == "like-input":  # size of another tensor (a skip connection): back to the input size
            return F.interpolate(F.max_pool2d(y, 2), size=x.shape[2:], mode="bilinear", align_corners=False)
        if self.how == "scale-factor":  # near miss: a constant scale factor
            return F.interpolate(y, scale_factor=2.0, mode="nearest")
        raise ValueError(self.how)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    view, up = ViewHead(), Upsample()
    yield Case("view-dynamic-batch", view, (x,), opset=13, dynamo=False, torchscript=True,
               export_kwargs={"dynamic_axes": BATCH}, **io)
    yield Case("resize-to-size", up, (x,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: a fixed input shape, and onnx-simplifier folds the shape arithmetic into constants.
    # The same modules (same weights) and the same input as the cases they rewrite.
    yield Case("view-fixed-onnxsim", view, (x,), opset=13, dynamo=False, simplify=True, trigger=False,
               rewrites="view-dynamic-batch", **io)
    yield Case("resize-fixed-onnxsim", up, (x,), opset=13, dynamo=False, simplify=True, trigger=False,
               rewrites="resize-to-size", **io)


def variant(name, module, opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.randn(1, 3, H, H)
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(0)
    yield variant("view-opset13", ViewHead(), export_kwargs={"dynamic_axes": BATCH})
    yield variant("view-opset17", ViewHead(), opset=17, export_kwargs={"dynamic_axes": BATCH})
    yield variant("view-batch-channels", ViewHead("view-bc"), export_kwargs={"dynamic_axes": BATCH})
    yield variant("view-dynamo", ViewHead(), opset=18, dynamo=True,
                  export_kwargs={"dynamic_shapes": ({0: torch.export.Dim("batch", max=8)},), "external_data": False})
    yield variant("resize-double", Upsample("double"))
    yield variant("resize-like-input", Upsample("like-input"), opset=17)
    yield variant("resize-dynamo", Upsample("double"), opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("view-static-near-miss", ViewHead())
    yield variant("flatten-near-miss", ViewHead("flatten"), export_kwargs={"dynamic_axes": BATCH})
    yield variant("resize-scale-factor-near-miss", Upsample("scale-factor"))
    yield variant("resize-onnxsim-near-miss", Upsample("double"), simplify=True)
