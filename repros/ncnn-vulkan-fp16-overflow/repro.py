"""KB075: on ncnn's Vulkan path, activations are stored (and computed) in fp16 where the device supports it, so an
intermediate value past 65504 (fp16's largest finite number) becomes inf, and NaN after the next layer. The weights
here are all small (|w| < 1): this is about activations, not KB056's weights past 65504."""


from kb.blocks import fp16_cases, fp16_variants


def cases():
    yield from fp16_cases()


def variants():
    yield from fp16_variants()
