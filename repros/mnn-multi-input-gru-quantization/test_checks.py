from kb.checks import Checks

checks = Checks(__file__)
BUG = ["reshape-error", "extra-tensor-describe", "segfault", "quantized-model-segfault", "nan-output", "wrong-output"]


# Offline int8 quantization: a correct run was measured within 1.9% of the output range (KL with
# --useOriginRNNImpl, EMA on 3.1/3.2), the bug at 26% or more (ADMM; EMA on 3.0.0): 5% sits between.
RANGE = 0.05


def quantized(s, method, *flags):
    """Convert (GRU as a While subgraph by default; --useOriginRNNImpl keeps the GRU op), then mnnquant."""
    model = s.mnn.convert("gru", *flags, tag="origin" if flags else "while")
    config = s.mnn.sequence_calibration("gru", method)
    return s.mnn.run(s.mnn.quantize(model, config, name=f"gru.{model.stem.split('.')[1]}.{method}.mnn"))


@checks.bug("mnn", BUG, range_tol=RANGE)  # int8 features: see RANGE
def ema_while(s):
    return quantized(s, "EMA")


@checks.bug("mnn", BUG, range_tol=RANGE)  # int8 features: see RANGE
def kl_while(s):
    return quantized(s, "KL")


@checks.bug("mnn", BUG, range_tol=RANGE)  # int8 features: see RANGE
def admm_while(s):
    return quantized(s, "ADMM")


@checks.bug("mnn", BUG, range_tol=RANGE)  # int8 features: see RANGE
def ema_origin_rnn(s):
    return quantized(s, "EMA", "--useOriginRNNImpl")


@checks.bug("mnn", BUG, range_tol=RANGE)  # int8 features: see RANGE
def kl_origin_rnn(s):
    return quantized(s, "KL", "--useOriginRNNImpl")


@checks.bug("mnn", BUG, range_tol=RANGE)  # int8 features: see RANGE
def admm_origin_rnn(s):
    return quantized(s, "ADMM", "--useOriginRNNImpl")


@checks.variants("mnn", BUG, ["gru-state-input", "gru-single-input", "gru-two-layers", "gru-state-unsqueeze",
                              "gru-state-slice", "gru-opset17", "gru-onnxsim", "lstm-h0-c0", "lstm-single-input",
                              "gru-dynamo", "conv1d-near-miss"], range_tol=RANGE)  # see RANGE
def ema(s, case):
    """mnnquant EMA on the default conversion (recurrent layers become a While loop from 3.4)."""
    model = s.mnn.convert(case)
    return s.mnn.run(s.mnn.quantize(model, s.mnn.sequence_calibration(case, "EMA"), name=f"{case}.EMA.mnn"))


# Weights rounded to int8, features float: measured max abs diff 0.0023 (outputs up to 0.49).
@checks.workaround("mnn", "weight-only-quantization", atol=0.005)
def weight_quant_while(s):
    """--weightQuantBits 8: weights in int8, no calibration, features stay float."""
    return s.mnn.run(s.mnn.convert("gru", "--weightQuantBits", "8", tag="w8"))


@checks.workaround("mnn", "weight-only-quantization", atol=0.005)  # as above: measured 0.0015
def weight_quant_origin_rnn(s):
    return s.mnn.run(s.mnn.convert("gru", "--weightQuantBits", "8", "--useOriginRNNImpl", tag="w8-origin"))

