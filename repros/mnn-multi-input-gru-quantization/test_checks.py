from kb.checks import Checks

checks = Checks(__file__)
BUG = ["reshape-error", "extra-tensor-describe", "segfault", "nan-output", "wrong-output"]


def quantized(s, method, *flags):
    """Convert (GRU as a While subgraph by default; --useOriginRNNImpl keeps the GRU op), then mnnquant."""
    model = s.mnn.convert("gru", *flags, tag="origin" if flags else "while")
    config = s.mnn.sequence_calibration("gru", method)
    return s.mnn.run(s.mnn.quantize(model, config, name=f"gru.{model.stem.split('.')[1]}.{method}.mnn"))


@checks.bug("mnn", BUG, range_tol=0.1)
def ema_while(s):
    return quantized(s, "EMA")


@checks.bug("mnn", BUG, range_tol=0.1)
def kl_while(s):
    return quantized(s, "KL")


@checks.bug("mnn", BUG, range_tol=0.1)
def admm_while(s):
    return quantized(s, "ADMM")


@checks.bug("mnn", BUG, range_tol=0.1)
def ema_origin_rnn(s):
    return quantized(s, "EMA", "--useOriginRNNImpl")


@checks.bug("mnn", BUG, range_tol=0.1)
def kl_origin_rnn(s):
    return quantized(s, "KL", "--useOriginRNNImpl")


@checks.bug("mnn", BUG, range_tol=0.1)
def admm_origin_rnn(s):
    return quantized(s, "ADMM", "--useOriginRNNImpl")


@checks.variants("mnn", BUG, ["gru-state-input", "gru-single-input", "gru-two-layers", "gru-state-unsqueeze",
                              "gru-state-slice", "gru-opset17", "gru-onnxsim", "lstm-h0-c0", "lstm-single-input",
                              "gru-dynamo", "conv1d-near-miss"], range_tol=0.1)
def ema(s, case):
    """mnnquant EMA on the default conversion (recurrent layers become a While loop from 3.4)."""
    model = s.mnn.convert(case)
    return s.mnn.run(s.mnn.quantize(model, s.mnn.sequence_calibration(case, "EMA"), name=f"{case}.EMA.mnn"))


@checks.workaround("mnn", "weight-only-quantization", atol=0.01)
def weight_quant_while(s):
    """--weightQuantBits 8: weights in int8, no calibration, features stay float."""
    return s.mnn.run(s.mnn.convert("gru", "--weightQuantBits", "8", tag="w8"))


@checks.workaround("mnn", "weight-only-quantization", atol=0.01)
def weight_quant_origin_rnn(s):
    return s.mnn.run(s.mnn.convert("gru", "--weightQuantBits", "8", "--useOriginRNNImpl", tag="w8-origin"))

