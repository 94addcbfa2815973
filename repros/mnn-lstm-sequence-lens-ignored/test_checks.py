from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)


def _h(out: Outputs) -> Outputs:
    """The final hidden state h_n alone (the case also returns the padded output, which torch's exporter needs)."""
    return Outputs(out.case, {"h": out.arrays["h"]}, f"{out.source}, h_n")


@checks.bug("mnn", ["padded-steps-run", "lstm-seq-lens-warning"])
def final_state(s):
    """h_n of the packed LSTM, compared alone with torch's: torch's is each sequence's state at its last real step."""
    got = s.mnn.run(s.mnn.convert("lstm-final-state"))
    return s.against(_h(got), _h(s.artifacts.reference("lstm-final-state")))
