from kb.checks import Checks
from kb.compare import compare

checks = Checks(__file__)
BUG = ["module-missing-output", "module-output-not-found", "session-output-not-found", "session-input-not-found"]


@checks.bug("mnn", BUG)
def trigger_optimize_level_0(s):
    """The trigger model converted with --optimizeLevel 0 (KB053's way around a lost output), run with the Session
    API, then the Module API: the Conv3D rewrite runs at that level too."""
    model = s.mnn.convert("trigger", "--optimizeLevel", "0", tag="o0")
    got = s.mnn.run_session(model, "trigger")
    c = compare(got, s.artifacts.torch_outputs("trigger"), 1e-4, 1e-3, None)
    return got if not c.close else s.mnn.run(model, "trigger")
