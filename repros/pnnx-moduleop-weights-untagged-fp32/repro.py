"""KB234 (Tencent/ncnn#4997): a module kept whole by pnnx's moduleop= becomes one custom ncnn layer, and pnnx writes
that layer's weights to the .bin as they are, bare fp32 with no storage tag, whatever fp16= says: fp16=1 leaves them
full size (the thread), and a custom layer that reads them the way ncnn's own layers read theirs (ModelBin::load
with type 0, a tag first) cannot load the file. The model: a module holding nn.Linear(10, 10) and a scale, kept
whole (moduleop=kb_repro.ScaledLinear: kb imports this file as kb_repro), then an ordinary nn.Linear that pnnx
converts itself."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False)


class ScaledLinear(nn.Module):
    """The user's module that pnnx keeps as one operator (moduleop=): 100 weights, implemented in ncnn by the
    user's own custom layer (test_checks.py's user_program.ScaledLinear)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 10, bias=False)

    def forward(self, x):
        return self.fc(x) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = ScaledLinear()
        self.fc2 = nn.Linear(10, 10, bias=False)  # converted by pnnx: an ncnn Gemm, its weights tagged

    def forward(self, x):
        return self.fc2(self.op(x))


def cases():
    yield Case("moduleop", seeded(Model), (randn(10, 10),), torchscript=True, **IO)
