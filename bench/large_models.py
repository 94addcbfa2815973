"""Real-sized architectures (20 to 50 MB of float32 weights) for bench/locate_large.py, written out as in the
reference code (timm and torchvision do not import here), random weights, seeded, norms perturbed as in
bench/arch/models/base.py. Each carries a trigger an installed engine is known to fail on:

- mobilenetv3-large: torchvision's MobileNetV3-Large (1000 classes, 224x224), nn.Hardswish (KB039, onnx2ncnn);
- convnext-pico: timm's ConvNeXt (dims 64..512, depths 2-2-6-2), channels-last Linear MLP (KB020, onnx2ncnn);
- yolov8s: ultralytics' YOLOv8s (C2f, SPPF, decoupled head; 640x640 -> 320x320 here), the head's
  `split((64, nc), 1)` of unequal sizes (KB044, onnx2ncnn);
- resnet18-desc: torchvision's ResNet-18 as a keypoint-descriptor backbone (a 1x1 Conv to 256 channels and
  F.normalize(dim=1) per position, as SuperPoint's head does), opset 18, where the norm is a ReduceL2 with an
  axes input (KB026: MNN reduces over every axis; KB022: pnnx drops the axes).

    python bench/large_models.py            # export what is missing into .kb/large/, print the sizes
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".kb" / "large"

# name -> (architecture, opset, engine, tolerance: None is kb locate's default)
MODELS = {"mobilenetv3-large": ("mobilenetv3-large", 14, "onnx2ncnn", None),
          "convnext-pico": ("convnext-pico", 13, "onnx2ncnn", None),
          "yolov8s": ("yolov8s", 13, "onnx2ncnn", None),
          # 1e-3: MNN's 3x3 convolutions on this real-sized ResNet differ from onnxruntime by 7e-4 of the magnitude,
          # past the default 1e-4, at the first block (a Relu located, no entry): the user's --tol
          "resnet18-desc": ("resnet18-desc", 18, "mnn", 1e-3)}


def _modules():
    import torch
    from torch import nn

    sys.path.insert(0, str(ROOT / "bench" / "arch"))
    from models.base import _perturb_norms

    def cba(cin, cout, k=3, s=1, g=1, act=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(cout)]
        return nn.Sequential(*layers, *([act()] if act else []))

    class SE(nn.Module):
        def __init__(self, c, s):
            super().__init__()
            self.fc1, self.fc2 = nn.Conv2d(c, s, 1), nn.Conv2d(s, c, 1)

        def forward(self, x):
            return x * nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(x.mean((2, 3), keepdim=True)))))

    def div8(v):
        n = max(8, int(v + 4) // 8 * 8)
        return n + 8 if n < 0.9 * v else n

    class IR(nn.Module):
        def __init__(self, cin, k, exp, cout, se, hs, s):
            super().__init__()
            act = nn.Hardswish if hs else nn.ReLU
            layers = [] if exp == cin else [cba(cin, exp, 1, act=act)]
            layers += [cba(exp, exp, k, s, exp, act=act)] + ([SE(exp, div8(exp // 4))] if se else [])
            self.block, self.res = nn.Sequential(*layers, cba(exp, cout, 1, act=None)), s == 1 and cin == cout

        def forward(self, x):
            return x + self.block(x) if self.res else self.block(x)

    class MobileNetV3Large(nn.Module):
        CFG = [(16, 3, 16, 16, 0, 0, 1), (16, 3, 64, 24, 0, 0, 2), (24, 3, 72, 24, 0, 0, 1), (24, 5, 72, 40, 1, 0, 2),
               (40, 5, 120, 40, 1, 0, 1), (40, 5, 120, 40, 1, 0, 1), (40, 3, 240, 80, 0, 1, 2),
               (80, 3, 200, 80, 0, 1, 1), (80, 3, 184, 80, 0, 1, 1), (80, 3, 184, 80, 0, 1, 1),
               (80, 3, 480, 112, 1, 1, 1), (112, 3, 672, 112, 1, 1, 1), (112, 5, 672, 160, 1, 1, 2),
               (160, 5, 960, 160, 1, 1, 1), (160, 5, 960, 160, 1, 1, 1)]

        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(cba(3, 16, 3, 2, act=nn.Hardswish), *[IR(*c) for c in self.CFG],
                                          cba(160, 960, 1, act=nn.Hardswish))
            self.classifier = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(), nn.Dropout(0.2),
                                            nn.Linear(1280, 1000))

        def forward(self, x):
            return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))

    class LN2d(nn.LayerNorm):
        def forward(self, x):
            return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    class CNBlock(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.dw, self.norm = nn.Conv2d(d, d, 7, padding=3, groups=d), nn.LayerNorm(d, eps=1e-6)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.gamma = nn.Parameter(torch.full((d,), 0.5))

        def forward(self, x):
            y = self.norm(self.dw(x).permute(0, 2, 3, 1))
            return x + (self.gamma * self.fc2(nn.functional.gelu(self.fc1(y)))).permute(0, 3, 1, 2)

    class ConvNeXt(nn.Module):
        def __init__(self, dims=(64, 128, 256, 512), depths=(2, 2, 6, 2)):
            super().__init__()
            stages, cin = [], 3
            for i, (d, n) in enumerate(zip(dims, depths)):
                down = ([nn.Conv2d(3, d, 4, 4), LN2d(d, eps=1e-6)] if i == 0
                        else [LN2d(cin, eps=1e-6), nn.Conv2d(cin, d, 2, 2)])
                stages.append(nn.Sequential(*down, *[CNBlock(d) for _ in range(n)]))
                cin = d
            self.stages, self.norm, self.head = nn.Sequential(*stages), nn.LayerNorm(cin), nn.Linear(cin, 1000)

        def forward(self, x):
            return self.head(self.norm(self.stages(x).mean((2, 3))))

    def conv(cin, cout, k=1, s=1):
        return cba(cin, cout, k, s, act=nn.SiLU)

    class Bottleneck(nn.Module):
        def __init__(self, c, short=True):
            super().__init__()
            self.cv1, self.cv2, self.add = conv(c, c, 3), conv(c, c, 3), short

        def forward(self, x):
            return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))

    class C2f(nn.Module):
        def __init__(self, cin, cout, n=1, short=False):
            super().__init__()
            self.c = cout // 2
            self.cv1, self.cv2 = conv(cin, 2 * self.c), conv((2 + n) * self.c, cout)
            self.m = nn.ModuleList(Bottleneck(self.c, short) for _ in range(n))

        def forward(self, x):
            y = list(self.cv1(x).chunk(2, 1))
            y.extend(m(y[-1]) for m in self.m)
            return self.cv2(torch.cat(y, 1))

    class SPPF(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.cv1, self.cv2, self.m = conv(cin, cin // 2), conv(cin * 2, cout), nn.MaxPool2d(5, 1, 2)

        def forward(self, x):
            y = [self.cv1(x)]
            y.extend(self.m(y[-1]) for _ in range(3))
            return self.cv2(torch.cat(y, 1))

    class YOLOv8s(nn.Module):
        def __init__(self, nc=80, reg=16):
            super().__init__()
            w = (32, 64, 128, 256, 512)
            self.nc, self.reg = nc, reg
            self.b = nn.ModuleList([conv(3, w[0], 3, 2), conv(w[0], w[1], 3, 2), C2f(w[1], w[1], 1, True),
                                    conv(w[1], w[2], 3, 2), C2f(w[2], w[2], 2, True), conv(w[2], w[3], 3, 2),
                                    C2f(w[3], w[3], 2, True), conv(w[3], w[4], 3, 2), C2f(w[4], w[4], 1, True),
                                    SPPF(w[4], w[4])])
            self.up = nn.Upsample(scale_factor=2)
            self.n1, self.n2 = C2f(w[4] + w[3], w[3]), C2f(w[3] + w[2], w[2])
            self.d1, self.n3 = conv(w[2], w[2], 3, 2), C2f(w[2] + w[3], w[3])
            self.d2, self.n4 = conv(w[3], w[3], 3, 2), C2f(w[3] + w[4], w[4])
            c2, c3 = max(16, w[2] // 4, reg * 4), max(w[2], nc)
            self.box = nn.ModuleList(nn.Sequential(conv(c, c2, 3), conv(c2, c2, 3), nn.Conv2d(c2, 4 * reg, 1))
                                     for c in (w[2], w[3], w[4]))
            self.cls = nn.ModuleList(nn.Sequential(conv(c, c3, 3), conv(c3, c3, 3), nn.Conv2d(c3, nc, 1))
                                     for c in (w[2], w[3], w[4]))

        def forward(self, x):
            feats = []
            for i, m in enumerate(self.b):
                x = m(x)
                if i in (4, 6):
                    feats.append(x)
            p3, p4 = feats
            h1 = self.n1(torch.cat([self.up(x), p4], 1))
            o3 = self.n2(torch.cat([self.up(h1), p3], 1))
            o4 = self.n3(torch.cat([self.d1(o3), h1], 1))
            o5 = self.n4(torch.cat([self.d2(o4), x], 1))
            outs = [torch.cat([b(o), c(o)], 1).flatten(2) for o, b, c in zip((o3, o4, o5), self.box, self.cls)]
            box, cls = torch.cat(outs, 2).split((4 * self.reg, self.nc), 1)  # ultralytics Detect: unequal sizes
            dist = box.view(1, 4, self.reg, -1).transpose(2, 1).softmax(1)
            return dist, cls.sigmoid()

    class Basic(nn.Module):
        def __init__(self, cin, cout, s):
            super().__init__()
            self.c1, self.c2 = cba(cin, cout, 3, s), cba(cout, cout, 3, act=None)
            self.down = cba(cin, cout, 1, s, act=None) if s != 1 or cin != cout else nn.Identity()
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.c2(self.c1(x)) + self.down(x))

    class ResNet18Desc(nn.Module):
        def __init__(self):
            super().__init__()
            blocks, cin = [], 64
            for i, w in enumerate((64, 128, 256, 512)):
                blocks += [Basic(cin, w, 1 if i == 0 else 2), Basic(w, w, 1)]
                cin = w
            self.stem = nn.Sequential(cba(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1))
            self.blocks, self.desc = nn.Sequential(*blocks), nn.Conv2d(512, 256, 1)

        def forward(self, x):
            return nn.functional.normalize(self.desc(self.blocks(self.stem(x))), dim=1)

    return {"mobilenetv3-large": (MobileNetV3Large, (1, 3, 224, 224), ["logits"]),
            "convnext-pico": (ConvNeXt, (1, 3, 224, 224), ["logits"]),
            "yolov8s": (YOLOv8s, (1, 3, 320, 320), ["box", "cls"]),
            "resnet18-desc": (ResNet18Desc, (1, 3, 224, 224), ["descriptors"])}, _perturb_norms


def build(names: list[str] | None = None) -> dict[str, dict]:
    """{name: {"model": path, "inputs": npz, "engine": E, "tol": T, "mb": size}}, exporting what is missing."""
    import numpy as np

    out = {}
    mods = perturb = None
    for name, (arch, opset, engine, tol) in MODELS.items():
        if names and name not in names:
            continue
        path, feed = OUT / f"{name}.onnx", OUT / f"{name}.inputs.npz"
        if not path.is_file():
            import torch

            if mods is None:
                mods, perturb = _modules()
            cls, shape, outs = mods[arch]
            torch.manual_seed(0)
            m = perturb(cls()).eval()
            x = torch.randn(*shape)
            OUT.mkdir(parents=True, exist_ok=True)
            torch.onnx.export(m, (x,), str(path), input_names=["input"], output_names=outs, opset_version=opset,
                              dynamo=False)
            np.savez(feed, input=x.numpy())
        out[name] = {"model": path, "inputs": feed, "engine": engine, "tol": tol, "mb": path.stat().st_size / 1e6}
    return out


if __name__ == "__main__":
    for name, m in build(sys.argv[1:] or None).items():
        print(f"{name:20} {m['mb']:6.1f} MB  {m['engine']:9} {m['model']}")
