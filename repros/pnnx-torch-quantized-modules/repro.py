"""KB189: a model quantized with PyTorch's own eager-mode quantization (torch.ao.quantization: QuantStub,
fused Conv+BN+ReLU, prepare, calibrate, convert), traced and given to pnnx, as Tencent/ncnn#3410 does with
torchvision's quantized shufflenet_v2. pnnx has no rule that turns PyTorch's quantized modules into ncnn's int8
layers: the releases on PyPI abort while loading a TorchScript that holds packed quantized weights (their libtorch
has no quantized engine: 'Didn't find engine for operation quantized::conv2d_prepack NoQEngine'), and where no
packed weight is held (Quantize/DeQuantize, a quantized add, QAT fake quantization) they write the ops through
unconverted, which ncnn cannot load. The float model converts."""

import torch
from torch import nn
from torch.ao import quantization as tq
from torch.ao.nn.quantized import FloatFunctional

from kb.blocks import randn, seeded
from kb.export import Case

torch.backends.quantized.engine = "x86"  # torch's default engine on x86; the model is quantized for it


class Stem(nn.Module):
    """QuantStub, Conv+BN+ReLU, DeQuantStub: the first block of a quantizable torchvision model."""

    def __init__(self, cin=3, cout=8, stubs=True):
        super().__init__()
        self.quant, self.dequant = (tq.QuantStub(), tq.DeQuantStub()) if stubs else (nn.Identity(), nn.Identity())
        self.conv, self.bn, self.relu = nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()
        self.fuse = [["conv", "bn", "relu"]]

    def forward(self, x):
        return self.dequant(self.relu(self.bn(self.conv(self.quant(x)))))


class Tokens(nn.Module):
    """QuantStub, Linear+ReLU, Linear, DeQuantStub: an MLP over tokens."""

    def __init__(self):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.fc1, self.relu, self.fc2 = nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16)
        self.fuse = [["fc1", "relu"]]

    def forward(self, x):
        return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))


class ShuffleUnit(nn.Module):
    """torchvision's quantizable shufflenet_v2 downsampling unit, small: two branches of the same input (depthwise
    3x3 conv+BN then 1x1 conv+BN+ReLU; 1x1 conv+BN+ReLU, depthwise 3x3 conv+BN, 1x1 conv+BN+ReLU), concatenated
    (a quantized cat), then the channel shuffle (after the DeQuantStub)."""

    def __init__(self, c=8):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.branch1 = nn.Sequential(nn.Conv2d(3, 3, 3, 2, 1, groups=3, bias=False), nn.BatchNorm2d(3),
                                     nn.Conv2d(3, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.branch2 = nn.Sequential(nn.Conv2d(3, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                     nn.Conv2d(c, c, 3, 2, 1, groups=c, bias=False), nn.BatchNorm2d(c),
                                     nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.cat = FloatFunctional()
        self.fuse = [["branch1.0", "branch1.1"], ["branch1.2", "branch1.3", "branch1.4"],
                     ["branch2.0", "branch2.1", "branch2.2"], ["branch2.3", "branch2.4"],
                     ["branch2.5", "branch2.6", "branch2.7"]]

    def forward(self, x):
        x = self.quant(x)
        y = self.dequant(self.cat.cat([self.branch1(x), self.branch2(x)], dim=1))
        n, c, h, w = y.shape  # the shuffle in float: torch's exporter has no rule for a quantized tensor's copy
        return y.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)


class StubsOnly(nn.Module):
    """QuantStub then DeQuantStub: the input rounded to uint8 and back, no packed weight."""

    def __init__(self):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.fuse = []

    def forward(self, x):
        return self.dequant(self.quant(x))


class QuantAdd(nn.Module):
    """A residual add on quantized tensors (FloatFunctional.add: quantized::add), no packed weight."""

    def __init__(self):
        super().__init__()
        self.quant, self.dequant, self.add = tq.QuantStub(), tq.DeQuantStub(), FloatFunctional()
        self.fuse = []

    def forward(self, x):
        x = self.quant(x)
        return self.dequant(self.add.add(x, x))


def quantized(make, *args, qconfig=None, x=None):
    """`make(*args)` seeded, fused, prepared, calibrated on four seeded normal batches, converted: eager-mode static
    quantization as torch's tutorial and torchvision's quantized models do it (min/max observers, which calibrate
    faster than x86's default histogram; the converted modules are the same)."""
    model = seeded(make, *args).eval()
    if model.fuse:
        model = tq.fuse_modules(model, model.fuse)
    model.qconfig = qconfig or PER_CHANNEL
    model = tq.prepare(model)
    with torch.no_grad():
        for seed in range(4):
            model(randn(*x.shape, seed=10 + seed))
    return tq.convert(model)


def qat_prepared(x):
    """Quantization-aware training's model before convert: fused Conv+BN+ReLU with fake quantization."""
    model = seeded(Stem).train()
    model = tq.fuse_modules_qat(model, model.fuse)
    model.qconfig = QAT  # plain FakeQuantize modules (torch's exporter has no rule for the fused default)
    model = tq.prepare_qat(model)
    with torch.no_grad():
        model(x)
    model.apply(tq.disable_observer)  # frozen ranges, as a QAT model is exported
    return model.eval()


def dequantized(qmodel):
    """The workaround: the float model, as pnnx converts it, with the quantized model's weights dequantized
    (conv weight and bias of its fused ConvReLU2d): the same function up to the activations' int8 rounding."""
    qconv = qmodel.conv
    float_model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
    with torch.no_grad():
        float_model[0].weight.copy_(qconv.weight().dequantize())
        float_model[0].bias.copy_(qconv.bias())
    return float_model.eval()


def float_stem():
    """The float model before quantization: Conv+BN+ReLU (BN folded by pnnx)."""
    return seeded(Stem, stubs=False).eval()


# 7-bit activations (reduce_range), as torch's own x86 qconfig has them: with 8, torch's quantized conv saturates on
# x86 CPUs without VNNI (measured on an emulated Haswell: 0.605 off the float model, against 0.037 with VNNI).
PER_CHANNEL = tq.QConfig(activation=tq.MinMaxObserver.with_args(reduce_range=True),
                         weight=tq.default_per_channel_weight_observer)
PER_TENSOR = tq.QConfig(activation=tq.MinMaxObserver.with_args(reduce_range=True), weight=tq.default_weight_observer)

QAT = tq.QConfig(activation=tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0,
                                                    quant_max=255, reduce_range=False),
                weight=tq.default_weight_fake_quant)

TS = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)


def cases():
    x = randn(1, 3, 8, 8)
    qstem = quantized(Stem, x=x)
    yield Case("quantized-conv", qstem, (x,), **TS)
    yield Case("dequantized-float", dequantized(qstem), (x,), trigger=False, rewrites="quantized-conv", **TS)
    yield Case("float-conv", float_stem(), (x,), trigger=False, **TS)


def variants():
    x, tokens = randn(1, 3, 8, 8), randn(1, 4, 16)
    yield Case("quantized-conv-per-tensor", quantized(Stem, qconfig=PER_TENSOR, x=x), (x,), **TS)
    yield Case("quantized-linear", quantized(Tokens, x=tokens), (tokens,), **TS)
    yield Case("quantized-shufflenet-unit", quantized(ShuffleUnit, x=x), (x,), **TS)
    yield Case("quantize-dequantize-only", quantized(StubsOnly, x=x), (x,), **TS)
    yield Case("quantized-add", quantized(QuantAdd, x=x), (x,), **TS)
    yield Case("qat-fake-quant", qat_prepared(x), (x,), **TS)
    # Near misses: no quantized op reaches pnnx
    yield Case("float-conv-near-miss", float_stem(), (x,), **TS)
    yield Case("fused-float-near-miss", tq.fuse_modules(seeded(Stem).eval(), [["conv", "bn", "relu"]]), (x,), **TS)
    yield Case("stubs-not-converted-near-miss", seeded(Stem).eval(), (x,), **TS)
    yield Case("float-linear-near-miss", seeded(Tokens).eval(), (tokens,), **TS)
