from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["not-support-optional-bias", "drift"]
VARIANTS = ["bias-false", "seq-first", "two-layers", "bidirectional", "with-state", "bidir-two-layers-state",
            "opset17-onnxsim", "bias-false-bidirectional", "unrolled-cell", "gru"]


@checks.bug("mnn", SIGS)
def lstm_origin_rnn_impl(s):
    """The same with --useOriginRNNImpl, which keeps MNN's own LSTM op."""
    return s.mnn.run(s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"))


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
