from kb.checks import Checks

checks = Checks(__file__)


@checks.variants("mnn", ["drift"], ["v-grouped-bn-g2", "v-grouped-bn-g8", "v-grouped-bn-opset17", "v-grouped-scale-first",
                                    "v-grouped-scale", "v-depthwise-bn", "v-ungrouped-bn", "v-folded-dynamo"])
def variant(s, case):
    """Convert with default flags, run, compare with torch."""
    return s.mnn.run(s.mnn.convert(case))
