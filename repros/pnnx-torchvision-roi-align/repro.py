"""KB216: pnnx and torchvision's roi_align. torchvision.ops.roi_align(...) called as a function (mmcv, mmdeploy and
YOLOX-style heads do) leaves a `torchvision::roi_align` node in the TorchScript file: the oldest pnnx cannot load
it ("Unknown builtin op: torchvision::roi_align"), newer ones write it through unconverted
(`torchvision.roi_align`), and ncnn has no layer of that name.

torchvision itself cannot be installed next to this CPU torch, so the op is a stand-in: its schema is registered
under torchvision's own name with torch.library (the same schema torchvision registers), with a plain-torch
implementation of RoIAlign (average of bilinear samples, as torchvision computes it), and the ONNX symbolic
torchvision registers for it (ONNX RoiAlign, opset 16). The traced file then holds the same node a file traced with
torchvision holds. The registration happens once per process, in the process that imports this file."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

FEAT = (1, 4, 12, 12)


def _roi_align(x, rois, scale, ph, pw, sr, aligned):
    """torchvision's RoIAlign (avg), for sampling_ratio > 0: sr x sr bilinear samples per bin, averaged."""
    out = x.new_zeros((rois.shape[0], x.shape[1], ph, pw))
    H, W = x.shape[2], x.shape[3]
    off = 0.5 if aligned else 0.0
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        x1, y1, x2, y2 = (float(v) * scale - off for v in rois[k, 1:])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bw, bh = rw / pw, rh / ph
        for i in range(ph):
            for j in range(pw):
                acc = x.new_zeros(x.shape[1])
                for iy in range(sr):
                    for ix in range(sr):
                        yy = y1 + i * bh + (iy + 0.5) * bh / sr
                        xx = x1 + j * bw + (ix + 0.5) * bw / sr
                        if yy < -1.0 or yy > H or xx < -1.0 or xx > W:
                            continue
                        yy, xx = max(yy, 0.0), max(xx, 0.0)
                        y0, x0 = int(yy), int(xx)
                        if y0 >= H - 1:
                            y0 = y1_ = H - 1
                            yy = float(y0)
                        else:
                            y1_ = y0 + 1
                        if x0 >= W - 1:
                            x0 = x1_ = W - 1
                            xx = float(x0)
                        else:
                            x1_ = x0 + 1
                        ly, lx = yy - y0, xx - x0
                        f = x[b]
                        acc = acc + ((1 - ly) * (1 - lx) * f[:, y0, x0] + (1 - ly) * lx * f[:, y0, x1_]
                                     + ly * (1 - lx) * f[:, y1_, x0] + ly * lx * f[:, y1_, x1_])
                out[k, :, i, j] = acc / (sr * sr)
    return out


def _register():
    if hasattr(torch.ops, "torchvision") and hasattr(torch.ops.torchvision, "roi_align"):
        return
    global _LIB
    _LIB = torch.library.Library("torchvision", "DEF")
    _LIB.define("roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor")
    _LIB.impl("roi_align", _roi_align, "CPU")

    from torch.onnx import symbolic_helper as sh

    @sh.parse_args("v", "v", "f", "i", "i", "i", "i")
    def symbolic(g, x, rois, scale, ph, pw, sr, aligned):  # as torchvision/ops/_register_onnx_ops.py writes it
        batch = g.op("Cast", g.op("Gather", rois, g.op("Constant", value_t=torch.tensor(0)), axis_i=1), to_i=7)
        boxes = g.op("Slice", rois, g.op("Constant", value_t=torch.tensor([1])),
                     g.op("Constant", value_t=torch.tensor([5])), g.op("Constant", value_t=torch.tensor([1])))
        return g.op("RoiAlign", x, boxes, batch, spatial_scale_f=scale, output_height_i=ph, output_width_i=pw,
                    sampling_ratio_i=max(0, sr), coordinate_transformation_mode_s="half_pixel" if aligned
                    else "output_half_pixel")

    torch.onnx.register_custom_op_symbolic("torchvision::roi_align", symbolic, 16)


_register()


class RoIAlign(nn.Module):
    """The module form, torchvision.ops.RoIAlign: its class is named as torchvision's (__module__ below), so the
    traced submodule's type is `__torch__.torchvision.ops.roi_align.RoIAlign`, the name pnnx's pass_level1 matches.
    Nothing is installed or put on sys.path: only the class's own name is torchvision's."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size, self.spatial_scale = output_size, spatial_scale
        self.sampling_ratio, self.aligned = sampling_ratio, aligned

    def forward(self, x, rois):
        return torch.ops.torchvision.roi_align(x, rois, self.spatial_scale, self.output_size[0], self.output_size[1],
                                               self.sampling_ratio, self.aligned)


RoIAlign.__module__ = "torchvision.ops.roi_align"


class Head(nn.Module):
    """A two-stage detector's box head: a conv backbone, RoIAlign of the proposals (rois: [batch, x1, y1, x2, y2]
    in image pixels, stride 4) on its feature map, then a 1x1 conv on the pooled features.
    `how`: "function" (torchvision.ops.roi_align(...), as mmcv, mmdeploy and YOLOX heads call it), "module"
    (torchvision.ops.RoIAlign), "fc" (flatten and a Linear after the pooling), "crop" (a near miss: a fixed crop
    resized bilinearly, no RoIAlign), "backbone" (the model cut before the RoI pooling: the workaround).
    `rois`: a constant proposal tensor (a buffer) instead of an input."""

    def __init__(self, how="function", out=5, scale=0.25, sr=2, aligned=True, rois=None):
        super().__init__()
        self.conv = nn.Conv2d(FEAT[1], FEAT[1], 3, padding=1)
        self.head = nn.Conv2d(FEAT[1], 3, 1)
        self.fc = nn.Linear(FEAT[1] * out * out, 6)
        self.how, self.out, self.scale, self.sr, self.aligned = how, out, scale, sr, aligned
        self.roi = RoIAlign((out, out), scale, sr, aligned)
        if rois is not None:
            self.register_buffer("rois", rois)
        else:
            self.rois = None

    def forward(self, x, rois=None):
        feat = torch.relu(self.conv(x))
        if self.how == "backbone":
            return feat
        if self.how == "crop":
            crop = feat[:, :, 1:9, 1:8]
            return self.head(nn.functional.interpolate(crop, size=(self.out, self.out), mode="bilinear"))
        rois = self.rois if rois is None else rois
        if self.how == "module":
            pooled = self.roi(feat, rois)
        else:
            pooled = torch.ops.torchvision.roi_align(feat, rois, self.scale, self.out, self.out, self.sr, self.aligned)
        if self.how == "fc":
            return self.fc(pooled.flatten(1))
        return self.head(pooled)


def features(n=1, seed=1):
    return randn(n, *FEAT[1:], seed=seed)


ROIS = torch.tensor([[0.0, 4.0, 4.0, 36.0, 30.0], [0.0, 10.0, 2.0, 44.0, 46.0]])  # in pixels, stride 4
ONE_ROI = torch.tensor([[0.0, 6.0, 4.0, 30.0, 40.0]])


def cases():
    x = features()
    yield Case("roi-head", seeded(Head), (x, ROIS), opset=16, dynamo=False, torchscript=True)
    # The workaround: the same model split at the RoI pooling; its check converts the backbone (Head(how="backbone"),
    # traced there) and runs RoIAlign and the box head in the application.
    yield Case("split", seeded(Head), (x, ROIS), opset=16, dynamo=False, rewrites="roi-head")


def variants():
    x = features(seed=2)
    yield Case("function-constant-roi", seeded(Head, seed=1, rois=ONE_ROI), (x,), opset=16, dynamo=False,
               torchscript=True)
    yield Case("function-unaligned", seeded(Head, seed=1, sr=1, aligned=False), (x, ROIS), opset=16, dynamo=False,
               torchscript=True)
    yield Case("function-7x7-scale-half", seeded(Head, seed=1, out=7, scale=0.5), (x, ROIS / 2), opset=16,
               dynamo=False, torchscript=True)
    yield Case("function-batch2", seeded(Head, seed=1), (features(n=2, seed=2), torch.tensor(
        [[0.0, 4.0, 4.0, 36.0, 30.0], [1.0, 10.0, 2.0, 44.0, 46.0]])), opset=16, dynamo=False, torchscript=True)
    yield Case("function-fc-head", seeded(Head, seed=1, how="fc"), (x, ROIS), opset=16, dynamo=False,
               torchscript=True)
    yield Case("module", seeded(Head, seed=1, how="module"), (x, ROIS), opset=16, dynamo=False, torchscript=True)
    yield Case("module-constant-roi", seeded(Head, seed=1, how="module", rois=ONE_ROI), (x,), opset=16,
               dynamo=False, torchscript=True)
    yield Case("module-constant-rois", seeded(Head, seed=1, how="module", rois=ROIS), (x,), opset=16,
               dynamo=False, torchscript=True)
    # A near miss: a fixed crop resized bilinearly, with no RoIAlign.
    yield Case("crop-resize-near-miss", seeded(Head, seed=1, how="crop"), (x,), opset=16, dynamo=False,
               torchscript=True)
