"""mnnquant's ADMM calibration reading images: each check writes seeded BMP images and an mnnquant config in
the "image" layout (tools/quantization's default input_type), quantizes the case's float .mnn, then runs it."""

import struct

from kb.checks import Checks

checks = Checks(__file__)
# int8 against the float model's torch output, as a fraction of its largest magnitude (KB159's bound).
RANGE_TOL = 0.25
FORMATS = {1: "GRAY", 3: "RGB", 4: "RGBA"}


def bmp(path, img):
    """A 24-bit BMP of an HxWx3 uint8 RGB array (mnnquant reads images with stb_image)."""
    h, w, _ = img.shape
    row = (w * 3 + 3) & ~3
    data = b"".join(img[y, :, ::-1].tobytes().ljust(row, b"\0") for y in range(h - 1, -1, -1))
    head = b"BM" + struct.pack("<IHHI", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    path.write_bytes(head + info + data)


def image_config(s, case, method, images):
    """`images` seeded smooth-plus-noise BMPs of the case's size in a folder, and mnnquant's config for them:
    mean 127.5 and normal 1/127.5 per channel (pixels to [-1, 1]), MAX_ABS weights, as in alibaba/MNN#615."""
    import numpy as np

    with np.load(s.artifacts.inputs(case)) as z:
        _, channels, height, width = z["input"].shape
    folder = s.path(f"images-{height}x{width}-{images}")
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:height, 0:width] / max(height, width)
    for i in range(images):
        f, phase = rng.uniform(1, 8, (3, 2)), rng.uniform(0, 6.3, 3)
        img = np.stack([np.sin(6.3 * (f[c, 0] * xx + f[c, 1] * yy) + phase[c]) for c in range(3)], -1)
        img = (img * 0.4 + 0.5 + rng.normal(0, 0.1, img.shape)).clip(0, 1)
        bmp(folder / f"{i:04d}.bmp", (img * 255).astype(np.uint8))
    return {"format": FORMATS[channels], "mean": [127.5] * channels, "normal": [1 / 127.5] * channels,
            "width": width, "height": height, "path": str(folder) + "/", "used_image_num": images,
            "feature_quantize_method": method, "weight_quantize_method": "MAX_ABS"}


def quantized(s, case, method="ADMM", images=4):
    model = s.mnn.convert(case)
    config = image_config(s, case, method, images)
    return s.mnn.run(s.mnn.quantize(model, config, name=f"{case}.{method}.{images}.mnn"), case)


@checks.bug("mnn", ["admm-image-heap-corruption"], range_tol=RANGE_TOL)
def admm_rgb_4(s):
    """One 3x3 convolution on a 1x3x32x32 input; mnnquant with ADMM on 4 RGB images of 32x32."""
    return quantized(s, "conv", images=4)


@checks.bug("mnn", ["admm-image-heap-corruption"], range_tol=RANGE_TOL)
def admm_rgb_1(s):
    """The same model and config on a single image."""
    return quantized(s, "conv", images=1)


@checks.bug("mnn", ["admm-image-heap-corruption"], range_tol=RANGE_TOL)
def admm_gray(s):
    """One convolution on a 1x1x32x32 input; ADMM on 4 images read as GRAY."""
    return quantized(s, "conv-gray", images=4)


@checks.bug("mnn", ["admm-image-heap-corruption"], range_tol=RANGE_TOL)
def admm_resnet_224(s):
    """A small ResNet-like classifier (7x7 stem, max pool, four basic blocks, global pool, fc) on 1x3x224x224;
    ADMM on 16 RGB images of 224x224."""
    return quantized(s, "resnet-224", images=16)


@checks.control("mnn", range_tol=RANGE_TOL)
def admm_rgba(s):
    """One convolution on a 1x4x32x32 input; ADMM on 4 images read as RGBA (4 channels)."""
    return quantized(s, "conv-rgba", images=4)


@checks.workaround("mnn", "kl-calibration", range_tol=RANGE_TOL)
def kl_rgb_4(s):
    """The `conv` model and the same 4 RGB images, "feature_quantize_method": "KL"."""
    return quantized(s, "conv", "KL", images=4)


@checks.workaround("mnn", "kl-calibration", range_tol=RANGE_TOL)
def kl_resnet_224(s):
    """The ResNet-like model and the same 16 images of 224x224, KL."""
    return quantized(s, "resnet-224", "KL", images=16)


@checks.workaround("mnn", "sequence-layout", range_tol=RANGE_TOL)
def admm_sequence(s):
    """The `conv` model, ADMM, on 4 samples given as text files ("input_type": "sequence"): the case's input,
    then seeded normals."""
    model = s.mnn.convert("conv")
    config = s.mnn.sequence_calibration("conv", "ADMM", samples=4)
    return s.mnn.run(s.mnn.quantize(model, config, name="conv.ADMM.sequence.mnn"), "conv")
