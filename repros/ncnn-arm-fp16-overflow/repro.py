"""KB076: on ncnn's ARM CPU path, where the CPU has fp16 arithmetic (ARMv8.2 and newer: asimdhp), ncnn stores and
computes activations in fp16 by default, so an intermediate value past 65504 (fp16's largest finite number) becomes
inf, and NaN (or 0) after the next layer. The same .param/.bin is right on ARMv8.0 and on x86. Every weight here is
small (|w| < 1): this is about activations, not KB056's weights past 65504. The models are KB075's (the same
mechanism on the Vulkan GPU)."""


from kb.blocks import (
    AttentionScores,
    RMSNorm,
    ViTBlock,
    features,
    fp16_cases,
    fp16_variants,
    residual_stream,
)
from kb.export import Case


def cases():
    yield from fp16_cases()
    # q @ k^T of features of about 40 over 64 channels: the diagonal reaches 1e5 before the division by 8.
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)


def variants():
    yield from fp16_variants()
