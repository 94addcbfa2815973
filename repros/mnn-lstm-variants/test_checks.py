from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["not-support-optional-bias", "drift"]


@checks.bug("mnn", SIGS)
def lstm_origin_rnn_impl(s):
    """The same with --useOriginRNNImpl, which keeps MNN's own LSTM op."""
    return s.mnn.run(s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"))
