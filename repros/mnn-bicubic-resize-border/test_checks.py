from convkb.checks import Checks

checks = Checks(__file__)
VARIANTS = ["bicubic-opset13", "bicubic-dynamo", "bicubic-onnxsim", "bicubic-scale4", "bicubic-size",
            "conv-bicubic-conv", "bicubic-align-corners", "bilinear-near-miss",
            "nearest-near-miss", "bilinear-dynamo-near-miss"]


@checks.bug("mnn", ["border-mismatch"], atol=1e-4, rtol=1e-3)
def bicubic_x2(s):
    """F.interpolate(scale_factor=2, mode="bicubic", align_corners=False), converted and run with MNN."""
    return s.mnn.run(s.mnn.convert("bicubic"))


@checks.variants("mnn", ["border-mismatch"], VARIANTS, atol=1e-4, rtol=1e-3)
def variant(s, case):
    """Convert with mnnconvert and run with MNN; compare with torch."""
    return s.mnn.run(s.mnn.convert(case))


@checks.bug("mnn", ["border-mismatch"], atol=1e-4, rtol=1e-3)
def bicubic_downscale(s):
    """For the record: the same Resize downscaling by 2 (scale_factor=0.5). No source coordinate falls below 0."""
    return s.mnn.run(s.mnn.convert("bicubic-downscale"))


@checks.workaround("mnn", "replicate-pad-crop", atol=1e-4, rtol=1e-3)
def replicate_pad_crop(s):
    """Replicate-pad 2 px, upsample, crop 2 * scale px: matches torch everywhere."""
    return s.mnn.run(s.mnn.convert("bicubic-padded"))
