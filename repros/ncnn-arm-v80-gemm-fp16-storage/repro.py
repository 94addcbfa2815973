"""KB188: ncnn returns garbage (wrong values, often some NaN) from a Gemm layer with a constant B, the layer pnnx writes
for nn.Linear (and x @ W) over tokens, when it keeps blobs in fp16: on an ARM CPU without fp16 arithmetic (ARMv8.0:
Cortex-A53, A72) with 1.0.20230223 to 1.0.20231027, and on one with it (ARMv8.2: Cortex-A76) with 1.0.20240102. The
values are ordinary (N(0, 1) inputs, nn.Linear's default weights): no overflow. fp16 storage off fixes it, fp16
arithmetic off does not; x86 and the other releases are right. onnx2ncnn writes the same Linear as an InnerProduct
layer, which is right; so is a MatMul of two activations. A ViT's MLP and its whole block go wrong through it (KB076's
check vit-block-a72)."""

from torch import nn

from kb.blocks import ViTBlock, randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])


class MLP(nn.Module):
    """A ViT block's MLP half: LayerNorm, Linear(32, 128), GELU, Linear(128, 32)."""

    def __init__(self, d=32):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(self.norm(x))))


class Scores(nn.Module):
    """x @ x^T: a MatMul of two activations (no constant operand), as attention's q @ k^T."""

    def forward(self, x):
        return x @ x.transpose(-1, -2)


def cases():
    # nn.Linear(32, 128) over 8 tokens given as an (8, 32) matrix: pnnx writes one Gemm layer (constant B and C).
    yield Case("linear", seeded(nn.Linear, 32, 128), (randn(8, 32),), opset=13, dynamo=False, torchscript=True,
               ways=["opset11", "opset17", "opset18", "opset17-onnxsim"], **IO)
    # A ViT's MLP over (1, 8, 32) tokens: LayerNorm, then two Gemm layers around a GELU.
    yield Case("mlp", seeded(MLP), (randn(1, 8, 32),), opset=17, dynamo=False, torchscript=True, **IO)
    # Control: a MatMul of two activations (pnnx: a MatMul layer).
    yield Case("scores", Scores(), (randn(1, 8, 32),), opset=17, dynamo=False, torchscript=True, trigger=False, **IO)


def variants():
    # pnnx from TorchScript unless the name says -onnx2ncnn (onnx2ncnn, opset 11: an InnerProduct layer).
    yield Case("linear-no-bias", seeded(nn.Linear, 32, 128, bias=False), (randn(8, 32),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("linear-8x8", seeded(nn.Linear, 8, 8, seed=2), (randn(4, 8, seed=2),), opset=13, dynamo=False,
               torchscript=True, **IO)
    yield Case("vit-block", ViTBlock().eval(), (randn(1, 8, 32),), opset=17, dynamo=False, torchscript=True, **IO)
    yield Case("linear-onnx2ncnn", seeded(nn.Linear, 32, 128), (randn(8, 32),), opset=11, dynamo=False, **IO)
