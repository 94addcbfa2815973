from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("mnn", "origin-rnn-impl")
def lstm_origin_rnn_impl(s):
    """The same ONNX file converted with --useOriginRNNImpl (MNN's own LSTM op, no While rewrite)."""
    return s.mnn.run(s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"), "lstm")
