"""Trigger patterns match what they declare, and nothing else."""

import pytest
from onnx import TensorProto, helper

from kb.pattern import Pattern, find

DECONV_BN = Pattern.model_validate({
    "name": "grouped-deconv-bn", "summary": "",
    "nodes": {"deconv": {"op": "ConvTranspose", "attrs": {"group": {"gt": 1}}}, "bn": {"op": "BatchNormalization"}},
    "edges": [["deconv", "bn"]],
})
QDQ = Pattern.model_validate({
    "name": "qdq", "summary": "",
    "nodes": {"q": {"op": "QuantizeLinear", "graph_inputs": [0]}, "dq": {"op": "DequantizeLinear"},
              "conv": {"op": "Conv"}},
    "edges": [["q", "dq"], ["dq", "conv"]],
})
CUSTOM = Pattern.model_validate({
    "name": "custom", "summary": "", "nodes": {"c": {"custom": True}, "r": {"op": "Reshape"}}, "edges": [["c", "r"]],
})


def model(nodes, inputs=("x",), initializers=()):
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(i, TensorProto.FLOAT, None) for i in inputs],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor(n, TensorProto.FLOAT, [1], [1.0]) for n in initializers])
    return helper.make_model(g)


def chain(*specs):
    """Nodes fed one into the next: specs are (op, attrs)."""
    nodes, prev = [], "x"
    for i, (op, attrs) in enumerate(specs):
        nodes.append(helper.make_node(op, [prev, "w"], [f"t{i}"], name=f"n{i}", **attrs))
        prev = f"t{i}"
    return nodes


@pytest.mark.parametrize("group, hit", [(2, True), (16, True), (1, False), (None, False)])
def test_attribute_predicate(group, hit):
    attrs = {} if group is None else {"group": group}
    m = model(chain(("ConvTranspose", attrs), ("BatchNormalization", {})), initializers=["w"])
    assert bool(find([DECONV_BN], m)) is hit


TRACE = Pattern.model_validate({
    "name": "trace", "summary": "",
    "nodes": {"e": {"op": "Einsum", "attrs": {"equation": {"match": r"(?:^|,)\s*[\w.]*?([A-Za-z])[\w.]*?\1"}}}},
})


@pytest.mark.parametrize("equation, hit", [("bii->b", True), ("...ii->...i", True), ("ij,jkk->ik", True),
                                           ("bij->bji", False), ("bij,bjk->bik", False), (None, False)])
def test_a_regular_expression_tests_a_string_attribute(equation, hit):
    attrs = {} if equation is None else {"equation": equation}
    m = model([helper.make_node("Einsum", ["x"], ["y"], name="e", **attrs)])
    assert bool(find([TRACE], m)) is hit


ASYMMETRIC = Pattern.model_validate({"name": "pads", "summary": "",
                                    "nodes": {"c": {"op": "Conv", "attrs": {"pads": {"asymmetric": True}}}}})


@pytest.mark.parametrize("pads, hit", [([0, 0, 1, 1], True), ([2, 1, 3, 1], True), ([1, 2], True),
                                       ([1, 1, 1, 1], False), ([0, 0, 0, 0], False), ([1, 1], False),
                                       ([1, 1, 1], False), (None, False)])
def test_asymmetric_pads_differ_between_their_halves(pads, hit):
    """ONNX pads are every axis's begin, then every end: [0, 0, 1, 1] pads the bottom and right only."""
    attrs = {} if pads is None else {"pads": pads}
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="c", **attrs)], initializers=["w"])
    assert bool(find([ASYMMETRIC], m)) is hit


def test_a_broken_regular_expression_is_refused_when_the_entry_is_read():
    with pytest.raises(ValueError, match="not a regular expression"):
        Pattern.model_validate({"name": "t", "summary": "", "nodes": {"e": {"op": "Einsum", "attrs": {"equation": {"match": "(["}}}}})


def test_buried_in_a_bigger_graph_reports_node_names():
    m = model(chain(("Relu", {}), ("Conv", {}), ("ConvTranspose", {"group": 4}), ("BatchNormalization", {}),
                    ("Relu", {})), initializers=["w"])
    (match,) = find([DECONV_BN], m)
    assert match.nodes == {"deconv": "n2", "bn": "n3"}


def test_edge_direction_matters():
    m = model(chain(("BatchNormalization", {}), ("ConvTranspose", {"group": 2})), initializers=["w"])
    assert find([DECONV_BN], m) == []


def test_graph_input_slot():
    q = helper.make_node("QuantizeLinear", ["x", "s"], ["q"])
    dq = helper.make_node("DequantizeLinear", ["q", "s"], ["dq"])
    conv = helper.make_node("Conv", ["dq", "w"], ["y"])
    assert find([QDQ], model([q, dq, conv], initializers=["s", "w"]))
    relu = helper.make_node("Relu", ["x"], ["r"])  # the Q no longer reads a model input
    q2 = helper.make_node("QuantizeLinear", ["r", "s"], ["q"])
    assert not find([QDQ], model([relu, q2, dq, conv], initializers=["s", "w"]))


def test_custom_op_is_an_op_onnx_does_not_define():
    custom = helper.make_node("FeatureConversion", ["x"], ["c"], domain="custom")
    reshape = helper.make_node("Reshape", ["c", "w"], ["y"])
    assert find([CUSTOM], model([custom, reshape], initializers=["w"]))
    relu = helper.make_node("Relu", ["x"], ["c"])
    assert not find([CUSTOM], model([relu, reshape], initializers=["w"]))


def test_matches_inside_subgraphs():
    body = helper.make_graph(chain(("ConvTranspose", {"group": 2}), ("BatchNormalization", {})), "body",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                             [helper.make_tensor_value_info("t1", TensorProto.FLOAT, None)])
    outer = helper.make_node("If", ["cond"], ["y"], then_branch=body, else_branch=body)
    m = helper.make_model(helper.make_graph([outer], "main", [helper.make_tensor_value_info(
        "cond", TensorProto.BOOL, [])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]))
    assert {mt.graph for mt in find([DECONV_BN], m)} == {"body"}


def test_each_match_once():
    # one deconv feeding two BNs: two matches, not four
    d = helper.make_node("ConvTranspose", ["x", "w"], ["d"], group=2)
    b1 = helper.make_node("BatchNormalization", ["d"], ["y1"])
    b2 = helper.make_node("BatchNormalization", ["d"], ["y"])
    assert len(find([DECONV_BN], model([d, b1, b2], initializers=["w"]))) == 2


def test_disconnected_pattern_is_rejected():
    with pytest.raises(ValueError, match="not connected"):
        Pattern.model_validate({"name": "p", "summary": "", "nodes": {"a": {"op": "A"}, "b": {"op": "B"}}})


def test_every_entry_pattern_matches_its_own_reproducer(fixture_corpus):
    """Each entry's cases were exported and checked: each trigger case matches, each control does not.
    (tests/test_corpus.py holds the real entries to the same contract.)"""
    from kb.artifacts import check_triggers, prepare
    from kb.entries import load_all

    entries = load_all()
    assert len(entries) >= 3
    for entry in entries:
        arts = prepare(entry)
        check_triggers(entry, arts)  # raises PreparationFailed on a miss
        assert {c["trigger"] for c in arts.manifest.values()} >= {True}


def test_a_control_case_that_contains_the_pattern_is_refused(fixture_entry):
    from kb.artifacts import Artifacts, PreparationFailed, check_triggers, prepare
    from kb.entries import load_entry

    entry = load_entry(fixture_entry("fake-pow-nan"))
    arts = prepare(entry)
    as_control = {name: {**case, "trigger": False} for name, case in arts.manifest.items()}
    with pytest.raises(PreparationFailed, match="control case 'sqrt' contains trigger pattern 'sub-into-sqrt'"):
        check_triggers(entry, Artifacts(arts.dir, as_control))


SCALAR_FIRST = Pattern.model_validate({
    "name": "scalar-first", "summary": "", "nodes": {"mul": {"op": "Mul", "const_rank": {0: {"eq": 0}}}},
})
REDUCE_ONE_AXIS = Pattern.model_validate({
    "name": "reduce-one-axis", "summary": "",
    "nodes": {"r": {"op": "ReduceMean", "const_inputs": [1], "attr_inputs": {"axes": 1}, "attrs": {"axes": {"length": 1}}}},
})


@pytest.mark.parametrize("dims, hit", [([], True), ([1], False), ([4], False)])
def test_const_rank_reads_the_shape_not_the_weights(dims, hit):
    s = helper.make_tensor("s", TensorProto.FLOAT, dims, [0.5] * (dims[0] if dims else 1))
    g = helper.make_graph([helper.make_node("Mul", ["s", "x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializer=[s])
    assert bool(find([SCALAR_FIRST], helper.make_model(g))) is hit


def test_external_weights_are_never_read(tmp_path, monkeypatch):
    """A constant stored outside the model reads as unknown: scan never opens files beside it."""
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    axes.data_location = TensorProto.EXTERNAL
    axes.ClearField("int64_data")
    axes.external_data.add(key="location", value="missing.bin")
    g = helper.make_graph([helper.make_node("ReduceMean", ["x", "axes"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[axes])
    monkeypatch.chdir(tmp_path)
    assert find([REDUCE_ONE_AXIS], helper.make_model(g)) == []


WEIGHT_STORED = Pattern.model_validate({  # KB045's pattern: where a weight is stored, read as an attribute
    "name": "weight-stored", "summary": "",
    "nodes": {"layer": {"const_inputs": [1], "attrs": {"external_weight": {"eq": "external", "default": "external"}},
                        "attr_inputs": {"external_weight": 1}}},
})
WEIGHT_LENGTH = Pattern.model_validate({  # a test that depends on the list itself: the values are read
    "name": "weight-length", "summary": "",
    "nodes": {"layer": {"const_inputs": [1], "attrs": {"w": {"length": 2048}}, "attr_inputs": {"w": 1}}},
})


@pytest.mark.parametrize("external", [False, True])
def test_a_large_weight_read_as_an_attribute_is_not_converted(external, tmp_path, monkeypatch):
    """A weight of more than GraphIndex.LARGE values, tested as an attribute that no list can equal, is not
    turned into a Python list (tolist() on every weight of a 45 MB model cost seconds), and the answers stay
    those of the full comparison: an inline weight is not external; a length is still measured."""
    import numpy as np
    from onnx import numpy_helper

    from kb.pattern import GraphIndex

    w = numpy_helper.from_array(np.ones(2048, np.float32), "w")
    if external:
        w.data_location = TensorProto.EXTERNAL
        w.ClearField("raw_data")
        w.external_data.add(key="location", value="missing.bin")
    m = model([helper.make_node("Mul", ["x", "w"], ["y"])], initializers=[])
    m.graph.initializer.append(w)
    monkeypatch.chdir(tmp_path)
    full = GraphIndex.const_value

    def inline_never(self, name):  # an external weight reads as None without a conversion: allowed
        assert self._const(name).data_location == TensorProto.EXTERNAL, "the inline weight was converted"
        return full(self, name)

    monkeypatch.setattr(GraphIndex, "const_value", inline_never)
    assert bool(find([WEIGHT_STORED], m)) is external
    monkeypatch.setattr(GraphIndex, "const_value", full)
    assert bool(find([WEIGHT_LENGTH], m)) is not external


DATA_EQUAL = Pattern.model_validate({
    "name": "data-equal", "summary": "", "nodes": {"eq": {"op": "Equal", "data_dependent": True}},
})


def test_data_dependent_excludes_what_constants_and_shapes_compute():
    on_data = helper.make_node("Equal", ["x", "c"], ["y"])
    shape = helper.make_node("Shape", ["x"], ["s"])
    on_shape = helper.make_node("Equal", ["s", "c"], ["y"])
    assert find([DATA_EQUAL], model([on_data], initializers=["c"]))
    assert not find([DATA_EQUAL], model([shape, on_shape], initializers=["c"]))
    on_consts = helper.make_node("Equal", ["c", "c"], ["y"])
    assert not find([DATA_EQUAL], model([on_consts], initializers=["c"]))


RESHAPE_KEEPS_NO_BATCH = Pattern.model_validate({
    "name": "reshape-first-entry", "summary": "",
    "nodes": {"r": {"op": "Reshape", "const_values": {1: {0: {"not_in": [0, 1]}}}}},
})


@pytest.mark.parametrize("target, hit", [([4, 5], True), ([1, 20], False), ([0, -1], False), ([2, 3, 4], True)])
def test_const_values_test_elements_of_a_constant(target, hit):
    shape = helper.make_tensor("shape", TensorProto.INT64, [len(target)], target)
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[shape])
    assert bool(find([RESHAPE_KEEPS_NO_BATCH], helper.make_model(g))) is hit


FP16_WEIGHT = Pattern.model_validate({
    "name": "weight-past-fp16", "summary": "", "nodes": {"g": {"op": "Gemm", "const_abs_max": {1: {"gt": 65504}}}},
})


@pytest.mark.parametrize("weights, hit", [([1.0, -7e4], True), ([65504.0, -1.0], False), (None, False)])
def test_const_abs_max_tests_the_largest_magnitude_of_a_constant(weights, hit):
    init = [helper.make_tensor("w", TensorProto.FLOAT, [1, 2], weights)] if weights else []
    g = helper.make_graph([helper.make_node("Gemm", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ["x"] + ["w"] * (not init)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=init)
    assert bool(find([FP16_WEIGHT], helper.make_model(g))) is hit


@pytest.mark.parametrize("outputs, hit", [(["y"], True), (["y", "", "c"], True), (["y", "h", "c"], False)])
def test_outputs_counts_the_outputs_a_node_writes(outputs, hit):
    lstm = Pattern.model_validate({"name": "short-lstm", "summary": "",
                                   "nodes": {"l": {"op": "LSTM", "outputs": {"lt": 3}}}})
    node = helper.make_node("LSTM", ["x", "w", "r"], outputs, hidden_size=4)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[helper.make_tensor(n, TensorProto.FLOAT, [1], [1.0]) for n in ("w", "r")])
    assert bool(find([lstm], helper.make_model(g))) is hit


@pytest.mark.parametrize("inputs, hit", [(["x", "lo"], True), (["x", "lo", ""], False), (["x", "lo", "hi"], False)])
def test_inputs_counts_the_inputs_a_node_lists(inputs, hit):
    """An input left off the end is not listed; one skipped with "" is (what onnx2ncnn's input_size() sees)."""
    clip = Pattern.model_validate({"name": "clip-min-only", "summary": "",
                                   "nodes": {"c": {"op": "Clip", "inputs": {"eq": 2}}}})
    g = helper.make_graph([helper.make_node("Clip", inputs, ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[helper.make_tensor(n, TensorProto.FLOAT, [], [0.5]) for n in ("lo", "hi")])
    assert bool(find([clip], helper.make_model(g))) is hit


NOT_FLOAT_CAST = Pattern.model_validate({
    "name": "cast-converts", "summary": "",
    "nodes": {"c": {"op": "Cast", "attrs": {"to": {"eq": 1}}, "input_types": {0: {"ne": 1, "default": 0}}}},
})


@pytest.mark.parametrize("in_type, between, hit", [
    (TensorProto.FLOAT, "Unsqueeze", False),  # t[:, None].float() of a float input: a no-op cast
    (TensorProto.INT64, "Unsqueeze", True),  # an int64 mask made float: a real conversion
    (TensorProto.FLOAT, "Greater", True),  # a comparison's bool made float
    (TensorProto.FLOAT, "Sigmoid", True),  # an op whose type the pattern does not follow: unknown, the default
])
def test_input_types_follow_the_type_through_the_graph(in_type, between, hit):
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    mid = helper.make_node(between, ["x", "axes"] if between in ("Unsqueeze", "Greater") else ["x"], ["m"])
    cast = helper.make_node("Cast", ["m"], ["y"], to=TensorProto.FLOAT)
    g = helper.make_graph([mid, cast], "g", [helper.make_tensor_value_info("x", in_type, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[axes])
    assert bool(find([NOT_FLOAT_CAST], helper.make_model(g))) is hit


GROUPS_EQ_CHANNELS = {
    "name": "groups-eq-channels", "summary": "",
    "nodes": {"norm": {"op": "InstanceNormalization"}, "scale": {"op": "Mul"}},
    "edges": [["norm", "scale"]], "through": ["Reshape"],
    "same_dims": [[["norm", 1, 0], ["scale", 1, 0]]],
}


@pytest.mark.parametrize("groups, channels, hit", [(8, 8, True), (2, 8, False), (1, 8, False)])
def test_same_dims_compares_constants_of_two_matched_nodes(groups, channels, hit):
    """GroupNorm's export: InstanceNormalization over G groups (scale of shape (G,)), then the affine
    weight of shape (C, 1). Only G == C is the same dimension in both constants."""
    inits = [helper.make_tensor("g", TensorProto.FLOAT, [groups], [1.0] * groups),
             helper.make_tensor("b", TensorProto.FLOAT, [groups], [0.0] * groups),
             helper.make_tensor("w", TensorProto.FLOAT, [channels, 1], [1.0] * channels)]
    nodes = [helper.make_node("InstanceNormalization", ["x", "g", "b"], ["n"]),
             helper.make_node("Mul", ["n", "w"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    assert bool(find([Pattern.model_validate(GROUPS_EQ_CHANNELS)], helper.make_model(g))) is hit


def test_same_dims_must_name_pattern_nodes():
    with pytest.raises(ValueError, match="same_dims names unknown node 'nope'"):
        Pattern.model_validate({**GROUPS_EQ_CHANNELS, "same_dims": [[["norm", 1, 0], ["nope", 1, 0]]]})


MATVEC = Pattern.model_validate({
    "name": "matvec", "summary": "", "nodes": {"m": {"op": "MatMul", "const_rank": {1: {"eq": 1}},
                                                     "input_rank": {0: {"ge": 3, "default": 3}}}},
})


@pytest.mark.parametrize("x_rank, r_rank, hit", [(3, None, True), (2, None, False), (None, 2, False), (None, 4, True),
                                                 (None, None, True)])
def test_input_rank_reads_the_stated_shape_and_unknown_takes_the_default(x_rank, r_rank, hit):
    """x @ w fails on MNN for x of rank 3 or more (KB137). MatMul reads the model input x (x_rank) or a Relu's
    output r, whose rank a value_info entry states (r_rank) or nothing does: unknown, the pattern's default decides."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0] * 4)
    if x_rank:
        nodes, x = [helper.make_node("MatMul", ["x", "w"], ["y"])], [2] * (x_rank - 1) + [4]
    else:
        nodes, x = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])], [2, 4]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[w])
    if r_rank:
        g.value_info.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [2] * (r_rank - 1) + [4]))
    assert bool(find([MATVEC], helper.make_model(g))) is hit


LAST_RELU = Pattern.model_validate({
    "name": "last-relu", "summary": "",
    "nodes": {"conv": {"op": "Conv"}, "relu": {"op": "Relu", "graph_output": True}}, "edges": [["conv", "relu"]],
})


@pytest.mark.parametrize("after, hit", [((), True), ((("Sigmoid", {}),), False)])
def test_graph_output_tests_whether_the_node_writes_a_model_output(after, hit):
    """KB238's Relu: fused into the Conv, it loses the name only when its output is the graph's."""
    nodes = chain(("Conv", {}), ("Relu", {}), *after)
    m = model(nodes, initializers=["w"])
    assert bool(find([LAST_RELU], m)) is hit
