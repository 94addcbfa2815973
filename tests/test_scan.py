"""`kb scan`: every known problem's pattern is found wherever it hides, clean models stay clean,
regression guards are reported without alarm, and bad input gets one line and its own exit code.

The known problems are the fixture corpus's (tests/corpus): KB901 fake-custom-op-broadcast (a custom op
into InstanceNormalization; a grouped ConvTranspose into a per-channel Scale), KB902 fake-silu-guard
(Sigmoid into Mul; a regression guard) and KB903 fake-pow-nan (Sub into Sqrt; Sub into a Pow with a
constant exponent; Sqrt of a model input)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from kb.errors import KBError
from kb.match import codes
from kb.match.scan import find_problems, scan_command

ROOT = Path(__file__).resolve().parent.parent
F = TensorProto.FLOAT
KB = {"KB901": "fake-custom-op-broadcast", "KB902": "fake-silu-guard", "KB903": "fake-pow-nan"}
GUARDS = {"KB902"}  # fixed on every version accepted: found, but nothing to act on


@pytest.fixture(autouse=True)
def fixture_kb(fixture_corpus, tmp_path, monkeypatch):
    """The fixture corpus; statuses come from its expected.yaml only, not from whatever runs left behind."""
    monkeypatch.setenv("KB_RECORDS", str(tmp_path / "records"))
    monkeypatch.delenv("KB_SITE_URL", raising=False)
    return fixture_corpus


# ---- building models -------------------------------------------------------------------------

def vi(name, dtype=F):
    return helper.make_tensor_value_info(name, dtype, ["n"])  # any shape: matching needs none


def weight(name, *dims):
    return numpy_helper.from_array(np.ones(dims or (1,), np.float32), name)


def node(op, ins, out, name, **attrs):
    return helper.make_node(op, ins, [out], name=name, **attrs)


def graph(nodes, inputs=("x",), inits=(), name="main", outputs=None):
    outputs = outputs or [nodes[-1].output[0]]
    return helper.make_graph(nodes, name, [vi(i) for i in inputs], [vi(o) for o in outputs], initializer=list(inits))


def model(nodes, inputs=("x",), inits=(), opset=17, domains=(), **kw):
    g = graph(nodes, inputs, inits, **kw)
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    return helper.make_model(g, opset_imports=ops)


def convnet(prefix="", depth=3, start="x"):
    """Conv -> BatchNormalization -> Relu blocks: a plain, clean backbone. Returns nodes, last output, weights."""
    nodes, prev = [], start
    for i in range(depth):
        p = f"{prefix}/block{i}"
        nodes += [node("Conv", [prev, f"{p}.w", f"{p}.b"], f"{p}.c", f"{p}/Conv"),
                  node("BatchNormalization", [f"{p}.c", f"{p}.s", f"{p}.b", f"{p}.m", f"{p}.v"], f"{p}.n",
                       f"{p}/BatchNormalization"),
                  node("Relu", [f"{p}.n"], f"{p}.r", f"{p}/Relu")]
        prev = f"{p}.r"
    inits = [weight(f"{prefix}/block{i}.{k}", 4) for i in range(depth) for k in "wbsmv"]
    return nodes, prev, inits


def head(prev, prefix="/head"):
    """GlobalAveragePool -> Flatten -> Gemm, after a backbone."""
    return [node("GlobalAveragePool", [prev], f"{prefix}.p", f"{prefix}/Pool"),
            node("Flatten", [f"{prefix}.p"], f"{prefix}.f", f"{prefix}/Flatten"),
            node("Gemm", [f"{prefix}.f", f"{prefix}.w", f"{prefix}.b"], "logits", f"{prefix}/Gemm")], \
        [weight(f"{prefix}.w", 4, 4), weight(f"{prefix}.b", 4)]


def layer_norm_by_hand(prefix, prev, square):
    """x - mean(x), squared with `square` ('Pow' with a constant 2, or 'Mul' by itself)."""
    sq = (node("Pow", [f"{prefix}.d", "two"], f"{prefix}.sq", f"{prefix}/Pow") if square == "Pow"
          else node("Mul", [f"{prefix}.d", f"{prefix}.d"], f"{prefix}.sq", f"{prefix}/Mul"))
    return [node("ReduceMean", [prev], f"{prefix}.m", f"{prefix}/ReduceMean", axes=[1]),
            node("Sub", [prev, f"{prefix}.m"], f"{prefix}.d", f"{prefix}/Sub"), sq,
            node("ReduceMean", [f"{prefix}.sq"], f"{prefix}.v", f"{prefix}/ReduceMean_1", axes=[1])]


def scale(prev, prefix, group, k="k", c="c"):
    """ConvTranspose with `group`, then a per-channel Mul and Add by constants k and c (a "Scale")."""
    return [node("ConvTranspose", [prev, "wd"], f"{prefix}.up", f"{prefix}/ConvTranspose", group=group),
            node("Mul", [f"{prefix}.up", k], f"{prefix}.mu", f"{prefix}/scale/Mul"),
            node("Add", [f"{prefix}.mu", c], f"{prefix}.y", f"{prefix}/scale/Add")]


SCALE_WEIGHTS = [weight("wd", 4, 1, 3, 3), weight("k", 1, 4, 1, 1), weight("c", 1, 4, 1, 1)]


# ---- clean models: no known pattern, so nothing may be reported ------------------------------

def plain_convnet():
    nodes, last, inits = convnet(depth=5)
    hn, hw = head(last)
    return model(nodes + hn, inits=inits + hw)


def deconv_without_scale():
    nodes, last, inits = convnet(depth=2)
    nodes.append(node("ConvTranspose", [last, "wd"], "up", "/decoder/ConvTranspose", group=4, strides=[2, 2]))
    nodes.append(node("Relu", ["up"], "y", "/decoder/Relu"))
    return model(nodes, inits=inits + [weight("wd", 4, 1, 3, 3)])


def ungrouped_deconv_scale():
    return model(scale("x", "/up", group=1), inits=SCALE_WEIGHTS)


def grouped_deconv_times_activation():
    # Mul by another activation and Add of one: not a per-channel Scale, so nothing to fold
    nodes = [node("ConvTranspose", ["x", "wd"], "up", "/up/ConvTranspose", group=2),
             node("Tanh", ["x"], "gate", "/gate/Tanh"),
             node("Mul", ["up", "gate"], "g", "/up/Mul"),
             node("Add", ["g", "x"], "y", "/up/Add")]
    return model(nodes, inits=[weight("wd", 4, 2, 3, 3)])


def sigmoid_into_add():
    nodes = [node("Sigmoid", ["x"], "s", "/gate/Sigmoid"), node("Add", ["s", "x"], "y", "/gate/Add")]
    return model(nodes)


def standard_ops_into_instancenorm():
    nodes = [node("Concat", ["x", "x"], "c", "/cat/Concat", axis=1),
             node("Reshape", ["c", "shape"], "r", "/gn/Reshape"),
             node("InstanceNormalization", ["r", "s", "b"], "y", "/gn/InstanceNormalization")]
    return model(nodes, inits=[helper.make_tensor("shape", TensorProto.INT64, [3], [1, 32, -1]),
                               weight("s", 32), weight("b", 32)])


def sqrt_of_an_activation():
    return model([node("Relu", ["x"], "r", "/Relu"), node("Sqrt", ["r"], "y", "/Sqrt")])


def sqrt_of_an_initializer_listed_as_input():
    # Exporters with keep_initializers_as_inputs list every weight among the graph inputs: still a constant.
    return model([node("Sqrt", ["c"], "s", "/Sqrt"), node("Add", ["x", "s"], "y", "/Add")],
                 inputs=("x", "c"), inits=[weight("c", 4)])


def sqrt_of_a_constant_node():
    c = helper.make_node("Constant", [], ["c"], name="/c", value=weight("cv", 4))
    return model([c, node("Sqrt", ["c"], "s", "/Sqrt"), node("Add", ["x", "s"], "y", "/Add")])


def sqrt_of_an_absolute_difference():
    # the control case of KB903's reproducer
    return model([node("Sub", ["x", "m"], "d", "/Sub"), node("Abs", ["d"], "a", "/Abs"),
                  node("Sqrt", ["a"], "y", "/Sqrt")], inits=[weight("m")])


def squared_difference_by_mul():
    return model(layer_norm_by_hand("/ln", "x", "Mul"))


def pow_with_a_computed_exponent():
    nodes = [node("Sub", ["x", "m"], "d", "/Sub"), node("Pow", ["d", "p"], "y", "/Pow")]
    return model(nodes, inputs=("x", "m", "p"))


def clean_inside_if():
    then_nodes, last, inits = convnet("/then", depth=2)
    body = graph(then_nodes, inputs=(), name="then_body", outputs=[last])
    other = graph([node("Identity", ["x"], "same", "/else/Identity")], inputs=(), name="else_body")
    m = model([helper.make_node("If", ["cond"], ["y"], name="/If", then_branch=body, else_branch=other)],
              inputs=("cond", "x"), inits=inits)
    return m


CLEAN = [plain_convnet, deconv_without_scale, ungrouped_deconv_scale, grouped_deconv_times_activation,
         sigmoid_into_add, standard_ops_into_instancenorm, sqrt_of_an_activation,
         sqrt_of_an_initializer_listed_as_input, sqrt_of_a_constant_node, sqrt_of_an_absolute_difference,
         squared_difference_by_mul, pow_with_a_computed_exponent, clean_inside_if]


@pytest.fixture
def scan(tmp_path, capsys):
    """Save the model, run scan_command with --json, return (exit code, rows)."""

    def run(m, *engines):
        path = tmp_path / "model.onnx"
        onnx.save(m, str(path))
        code = scan_command(str(path), list(engines), True)
        return code, json.loads(capsys.readouterr().out)

    return run


@pytest.mark.parametrize("build", CLEAN, ids=lambda f: f.__name__)
def test_clean_models_report_nothing(build, scan):
    m = build()
    onnx.checker.check_model(m)  # they are real, valid models
    assert scan(m) == (codes.NOTHING_FOUND, [])


# ---- positive models: each differs from the reproducer, and must still be found --------------

def deconv_scale_buried():
    """A grouped ConvTranspose + Scale deep inside a bigger decoder, other names, group 8, opset 17."""
    nodes, last, inits = convnet("/encoder", depth=6)
    nodes += scale(last, "/decoder/up3", group=8)
    more, last2, inits2 = convnet("/refine", depth=4, start="/decoder/up3.y")
    hn, hw = head(last2)
    return model(nodes + more + hn, inits=inits + inits2 + hw + SCALE_WEIGHTS)


def deconv_scale_with_constant_nodes():
    """The Scale's factors coming from Constant nodes rather than initializers, opset 11."""
    nodes = [helper.make_node("Constant", [], ["k"], name="/scale/k", value=weight("kv", 1, 6, 1, 1)),
             helper.make_node("Constant", [], ["c"], name="/scale/c", value=weight("cv", 1, 6, 1, 1)),
             node("ConvTranspose", ["x", "wd"], "up", "deconv_2", group=3),
             node("Mul", ["up", "k"], "mu", "scale_mul"),
             node("Add", ["mu", "c"], "y", "scale_add")]
    return model(nodes, inits=[weight("wd", 6, 2, 4, 4)], opset=11)


def custom_op_into_instancenorm():
    """Another vendor's op (domain com.acme) into InstanceNormalization, after a backbone."""
    nodes, last, inits = convnet("/stem", depth=1)
    nodes += [helper.make_node("ChannelShuffleX", [last], ["cs"], name="/mix/ChannelShuffleX", domain="com.acme"),
              node("InstanceNormalization", ["cs", "s", "b"], "n", "/norm1/InstanceNormalization"),
              node("Relu", ["n"], "y", "/out/Relu")]
    return model(nodes, inits=inits + [weight("s", 4), weight("b", 4)], domains=("com.acme",))


def unknown_op_in_the_default_domain():
    """An op that ONNX does not define, in the default domain, opset 18."""
    nodes = [node("FancyUpsample", ["x"], "u", "/up/FancyUpsample"),
             node("InstanceNormalization", ["u", "s", "b"], "y", "/norm/InstanceNormalization")]
    return model(nodes, inits=[weight("s", 16), weight("b", 16)], opset=18)


def silu_in_a_block():
    nodes = [node("Conv", ["x", "w"], "c", "/block/Conv"), node("Sigmoid", ["c"], "s", "/block/act/Sigmoid"),
             node("Mul", ["c", "s"], "y", "/block/act/Mul")]
    return model(nodes, inits=[weight("w", 4, 4, 1, 1)])


def sqrt_of_a_state_input_opset7():
    """A streaming model: Sqrt of a model input named 'state_in', among other inputs, opset 7."""
    nodes = [node("Sqrt", ["state_in"], "n", "encoder.norm"), node("Add", ["feats", "n"], "s", "encoder.add"),
             node("Relu", ["s"], "y", "encoder.act")]
    return model(nodes, inputs=("feats", "lens", "state_in"), opset=7)


def sub_into_sqrt_in_a_normalization():
    nodes = [node("ReduceMean", ["x"], "m", "/norm/ReduceMean", axes=[1]), node("Sub", ["x", "m"], "d", "/norm/Sub"),
             node("Sqrt", ["d"], "r", "/norm/Sqrt"), node("MatMul", ["r", "wf"], "y", "/mlp/MatMul")]
    return model(nodes, inits=[weight("wf", 4, 4)])


def hand_layernorm_with_constant_exponent():
    two = helper.make_node("Constant", [], ["two"], name="/ln/two", value=helper.make_tensor("t", F, [], [2.0]))
    return model([two] + layer_norm_by_hand("/neck/ln", "x", "Pow"))


def silu_and_sub_into_sqrt():
    """A guard's pattern and a reproducing one in the same graph."""
    nodes = [node("Sigmoid", ["x"], "s", "/act/Sigmoid"), node("Mul", ["x", "s"], "a", "/act/Mul"),
             node("Sub", ["a", "m"], "d", "/norm/Sub"), node("Sqrt", ["d"], "y", "/norm/Sqrt")]
    return model(nodes, inits=[weight("m")])


def patterns_inside_if_and_loop():
    """A grouped deconv + Scale in an If branch, its factors initializers of the outer graph; x - mean
    raised to a power in a Loop body, the exponent an outer initializer; Sqrt of the outer model's input
    in the other branch."""
    then_body = graph(scale("x", "/then", group=2), inputs=(), name="then_body")
    else_body = graph([node("Sqrt", ["h0"], "e", "/else/Sqrt")], inputs=(), name="else_body")
    loop_body = helper.make_graph(
        [node("Sub", ["acc", "x"], "d", "/loop/Sub"), node("Pow", ["d", "two"], "acc_out", "/loop/Pow"),
         node("Identity", ["cond_in"], "cond_out", "/loop/cond")],
        "loop_body", [vi("i", TensorProto.INT64), vi("cond_in", TensorProto.BOOL), vi("acc")],
        [vi("cond_out", TensorProto.BOOL), vi("acc_out")])
    nodes = [helper.make_node("If", ["cond"], ["branch"], name="/If", then_branch=then_body, else_branch=else_body),
             helper.make_node("Loop", ["n", "cond", "branch"], ["y"], name="/Loop", body=loop_body)]
    return model(nodes, inputs=("cond", "n", "x", "h0"), inits=SCALE_WEIGHTS + [weight("two")])


POSITIVE = [
    (deconv_scale_buried, [("KB901", "grouped-deconv-scale",
                            ["/decoder/up3/ConvTranspose", "/decoder/up3/scale/Mul", "/decoder/up3/scale/Add"])]),
    (deconv_scale_with_constant_nodes, [("KB901", "grouped-deconv-scale", ["deconv_2", "scale_mul", "scale_add"])]),
    (custom_op_into_instancenorm, [("KB901", "custom-op-into-instancenorm",
                                    ["/mix/ChannelShuffleX", "/norm1/InstanceNormalization"])]),
    (unknown_op_in_the_default_domain, [("KB901", "custom-op-into-instancenorm",
                                         ["/up/FancyUpsample", "/norm/InstanceNormalization"])]),
    (silu_in_a_block, [("KB902", "silu", ["/block/act/Sigmoid", "/block/act/Mul"])]),
    (sqrt_of_a_state_input_opset7, [("KB903", "sqrt-of-input", ["encoder.norm"])]),
    (sub_into_sqrt_in_a_normalization, [("KB903", "sub-into-sqrt", ["/norm/Sub", "/norm/Sqrt"])]),
    (hand_layernorm_with_constant_exponent, [("KB903", "pow-of-difference", ["/neck/ln/Sub", "/neck/ln/Pow"])]),
    (silu_and_sub_into_sqrt, [("KB902", "silu", ["/act/Sigmoid", "/act/Mul"]),
                              ("KB903", "sub-into-sqrt", ["/norm/Sub", "/norm/Sqrt"])]),
    (patterns_inside_if_and_loop, [("KB901", "grouped-deconv-scale",
                                    ["/then/ConvTranspose", "/then/scale/Mul", "/then/scale/Add"]),
                                   ("KB903", "pow-of-difference", ["/loop/Sub", "/loop/Pow"]),
                                   ("KB903", "sqrt-of-input", ["/else/Sqrt"])]),
]


@pytest.mark.parametrize("build, expected", POSITIVE, ids=[b.__name__ for b, _ in POSITIVE])
def test_known_patterns_are_found_however_they_look(build, expected, scan):
    code, rows = scan(build())
    got = sorted((r["id"], r["pattern"], r["nodes"]) for r in rows)
    assert got == sorted(expected)
    # exit 1 if anything but a regression guard was found
    assert code == (codes.FOUND if {i for i, _, _ in expected} - GUARDS else codes.NOTHING_FOUND)
    for r in rows:
        assert r["entry"] == KB[r["id"]]
        assert r["url"] == f"http://127.0.0.1:8000/{r['entry']}/"
        assert r["status"]


def test_subgraph_matches_say_where(scan):
    _, rows = scan(patterns_inside_if_and_loop())
    assert {(r["id"], r["pattern"], r["graph"], r["subgraph"]) for r in rows} == {
        ("KB901", "grouped-deconv-scale", "then_body", True), ("KB903", "pow-of-difference", "loop_body", True),
        ("KB903", "sqrt-of-input", "else_body", True)}


def test_clean_text_output_says_so(tmp_path, capsys):
    path = tmp_path / "net.onnx"
    onnx.save(plain_convnet(), str(path))
    assert scan_command(str(path), [], False) == codes.NOTHING_FOUND
    assert "no known problem found" in capsys.readouterr().out


def test_site_url_comes_from_the_environment(scan, monkeypatch):
    monkeypatch.setenv("KB_SITE_URL", "https://kb.example.org/docs")
    _, rows = scan(sqrt_of_a_state_input_opset7())
    assert rows[0]["url"] == "https://kb.example.org/docs/fake-pow-nan/"


def test_many_matches_are_listed_once_each(scan):
    nodes = [n for i in range(30) for n in scale(f"x{i}", f"/up{i}", group=2)]
    m = model(nodes, inputs=[f"x{i}" for i in range(30)], inits=SCALE_WEIGHTS)
    _, rows = scan(m)
    assert len(rows) == 30 and len({tuple(r["nodes"]) for r in rows}) == 30


# ---- regression guards: found and shown, but no alarm ----------------------------------------

def test_a_regression_guard_is_shown_and_exits_zero(tmp_path, capsys):
    path = tmp_path / "silu.onnx"
    onnx.save(silu_in_a_block(), str(path))
    assert scan_command(str(path), [], False) == codes.NOTHING_FOUND
    out = capsys.readouterr().out
    assert "KB902  Fake: Sigmoid then Mul (SiLU) drifts after conversion" in out
    assert "status: onnxruntime 1.32.0: fixed" in out and "(a regression guard: fixed where measured)" in out


def test_a_guard_beside_a_problem_that_reproduces_exits_one(tmp_path, capsys):
    path = tmp_path / "both.onnx"
    onnx.save(silu_and_sub_into_sqrt(), str(path))
    assert scan_command(str(path), [], False) == codes.FOUND
    out = capsys.readouterr().out
    assert "(a regression guard: fixed where measured)" in out  # KB902 still says it is a guard
    assert "status: onnxruntime 1.32.0: reproduces" in out  # KB903
    assert out.count("regression guard") == 1


def test_a_guard_that_reproduces_on_the_version_asked_about_is_an_alarm(fixture_kb, scan):
    accepted(fixture_kb / "repros" / "fake-silu-guard", "silu", v1_20_0="reproduces", v1_32_0="fixed")
    assert scan(silu_in_a_block())[0] == codes.NOTHING_FOUND
    code, rows = scan(silu_in_a_block(), "onnxruntime==1.20.0")
    assert code == codes.FOUND and rows[0]["status"][0]["status"] == "reproduces"
    assert rows[0]["affects"] and rows[0]["status"][0]["affected"]


# ---- --engine: is the named release affected? A release never measured takes its nearest measured ones ----

UNMEASURED = [
    # accepted verdicts of KB902 (it concerns onnxruntime), release asked about, exit code, the rule's words
    ({"v1_20_0": "reproduces", "v1_32_0": "fixed"}, "1.25.0", codes.NOTHING_FOUND,
     "not measured on 1.25.0; nearest measured: 1.20.0 reproduces, 1.32.0 fixed: not counted as affected"),
    ({"v1_20_0": "reproduces", "v1_30_0": "reproduces", "v1_32_0": "fixed"}, "1.25.0", codes.FOUND,
     "not measured on 1.25.0; reproduces on 1.20.0 and 1.30.0, the nearest measured releases either side: "
     "counted as affected"),
    ({"v1_20_0": "fixed", "v1_32_0": "reproduces"}, "1.40.0", codes.FOUND,
     "not measured on 1.40.0; 1.32.0, the newest measured release, reproduces: counted as affected"),
    ({"v1_20_0": "reproduces", "v1_32_0": "fixed"}, "1.40.0", codes.NOTHING_FOUND,
     "not measured on 1.40.0; 1.32.0, the newest measured release, fixed: not counted as affected"),
    ({"v1_20_0": "reproduces", "v1_32_0": "fixed"}, "1.10.0", codes.FOUND,
     "not measured on 1.10.0; 1.20.0, the oldest measured release, reproduces: counted as affected"),
    ({"v1_20_0": "reproduces", "v1_25_0": "error", "v1_32_0": "fixed"}, "1.25.0", codes.NOTHING_FOUND,
     "not measured on 1.25.0; nearest measured: 1.20.0 reproduces, 1.32.0 fixed: not counted as affected"),
    ({"v1_20_0": "reproduces", "v1_25_0": "error", "v1_30_0": "reproduces"}, "1.25.0", codes.FOUND,
     "not measured on 1.25.0; reproduces on 1.20.0 and 1.30.0, the nearest measured releases either side: "
     "counted as affected"),
]


@pytest.mark.parametrize("verdicts, release, code, words", UNMEASURED,
                         ids=[f"{r}-{'-'.join(f'{k}={v}' for k, v in vs.items())}" for vs, r, _, _ in UNMEASURED])
def test_a_release_never_measured_is_judged_by_its_nearest_measured_ones(fixture_kb, verdicts, release, code,
                                                                         words, tmp_path, capsys):
    accepted(fixture_kb / "repros" / "fake-silu-guard", "silu", **verdicts)
    path = tmp_path / "silu.onnx"
    onnx.save(silu_in_a_block(), str(path))
    assert scan_command(str(path), [f"onnxruntime=={release}"], False) == code
    out = capsys.readouterr().out
    assert f"status: onnxruntime {release}: {words}" in out  # the text says which rule decided
    assert ("[affects this release]" in out) == (code == codes.FOUND)
    assert scan_command(str(path), [f"onnxruntime=={release}"], True) == code
    (row,) = json.loads(capsys.readouterr().out)
    assert row["affects"] == (code == codes.FOUND) and row["status"][0]["why"] == words


def test_fixed_does_not_affect_the_release_and_failing_another_way_does(fixture_kb, scan):
    folder = fixture_kb / "repros" / "fake-silu-guard"
    accepted(folder, "silu", v1_32_0="fixed")
    code, rows = scan(silu_in_a_block(), "onnxruntime==1.32.0")
    assert code == codes.NOTHING_FOUND and not rows[0]["affects"]
    for verdict in ("reproduces", "differs"):  # "affected (it fails another way there)": still something to act on
        accepted(folder, "silu", v1_32_0=verdict)
        assert scan(silu_in_a_block(), "onnxruntime==1.32.0")[0] == codes.FOUND, verdict


def test_engine_filter_lists_its_problems_and_counts_the_others(tmp_path, capsys):
    """KB903 concerns ncnn, KB902 onnxruntime: --engine ncnn lists KB903 only, and says KB902 was left out."""
    path = tmp_path / "both.onnx"
    onnx.save(silu_and_sub_into_sqrt(), str(path))
    scan_command(str(path), ["ncnn"], False)
    out = capsys.readouterr().out
    assert "KB903  " in out and "KB902  " not in out
    assert "1 known problem of other engines (onnxruntime) left out" in out
    scan_command(str(path), ["ncnn"], True)
    rows = json.loads(capsys.readouterr().out)  # --json keeps every match, and says which the text left out
    assert {(r["id"], r["concerns"]) for r in rows} == {("KB902", False), ("KB903", True)}
    scan_command(str(path), [], False)
    out = capsys.readouterr().out
    assert "KB903  " in out and "KB902  " in out and "left out" not in out  # without --engine: everything


def test_named_engines_own_problems_come_first(tmp_path, capsys):
    path = tmp_path / "both.onnx"
    onnx.save(silu_and_sub_into_sqrt(), str(path))
    for engines, order in ((["ncnn", "onnxruntime"], ["KB903", "KB902"]),
                           (["onnxruntime", "ncnn"], ["KB902", "KB903"])):
        scan_command(str(path), engines, False)
        out = capsys.readouterr().out
        assert sorted(order, key=lambda i: out.index(f"{i}  ")) == order, engines
        scan_command(str(path), engines, True)
        assert [r["id"] for r in json.loads(capsys.readouterr().out)] == order


def test_matches_are_summarised_per_pattern(tmp_path, capsys):
    """30 grouped deconvs + Scale: one line with the count and three node names, not 30 lines."""
    nodes = [n for i in range(30) for n in scale(f"x{i}", f"/up{i}", group=2)]
    path = tmp_path / "many.onnx"
    onnx.save(model(nodes, inputs=[f"x{i}" for i in range(30)], inits=SCALE_WEIGHTS), str(path))
    scan_command(str(path), [], False)
    out = capsys.readouterr().out
    assert "  grouped-deconv-scale ×30: /up0/scale/Add, /up1/scale/Add, /up2/scale/Add, … (+27)\n" in out
    assert out.count("/scale/Add") == 3 and "/up3/" not in out
    assert out.count("status: onnxruntime 1.32.0: reproduces") == 1  # the status once per problem


# ---- status for the engine versions asked about ----------------------------------------------

def accepted(folder, check, **verdicts):
    """Replace the entry's expected.yaml: `check` accepted with these verdicts per version (on onnxruntime, the
    engine the fixture entries' checks run)."""
    from kb import expectations

    table = {check: {v[1:].replace("_", "."): expectations.Expectation(verdict=verdict, observed="2026-11-21",
                                                                       platform="test")
                     for v, verdict in verdicts.items()}}
    expectations.write(folder / "expected.yaml", table, {check: "onnxruntime"})


@pytest.fixture
def scale_entry(fixture_kb):
    """KB901, its `convert` check accepted as reproducing on onnxruntime 1.20.0 and fixed on 1.32.0."""
    folder = fixture_kb / "repros" / "fake-custom-op-broadcast"
    accepted(folder, "convert", v1_20_0="reproduces", v1_32_0="fixed")
    return folder


def status_of(rows, entry_id):
    return {(s["engine"], s["version"]): s for s in next(r for r in rows if r["id"] == entry_id)["status"]}


def test_status_defaults_to_the_newest_version(scale_entry, scan):
    _, rows = scan(deconv_scale_buried())
    assert list(status_of(rows, "KB901")) == [("onnxruntime", "1.32.0")]
    assert status_of(rows, "KB901")[("onnxruntime", "1.32.0")]["status"] == "fixed"


def test_status_on_a_named_version_cites_the_patterns_checks(scale_entry, scan):
    _, rows = scan(deconv_scale_buried(), "onnxruntime==1.20.0")
    st = status_of(rows, "KB901")[("onnxruntime", "1.20.0")]
    assert st["status"] == "reproduces" and st["checks"] == {"convert": "reproduces"}


def test_status_of_a_pattern_without_named_checks_cites_every_check(fixture_kb, scan):
    _, rows = scan(custom_op_into_instancenorm())
    st = status_of(rows, "KB901")[("onnxruntime", "1.32.0")]
    assert st["status"] == "reproduces" and st["checks"] == {"convert": "reproduces", "standard-ops": "works"}
    _, rows = scan(deconv_scale_buried())  # pattern grouped-deconv-scale names `convert` only
    assert status_of(rows, "KB901")[("onnxruntime", "1.32.0")]["checks"] == {"convert": "reproduces"}


def test_status_on_a_version_never_checked_names_the_nearest(scale_entry, scan):
    _, rows = scan(deconv_scale_buried(), "onnxruntime==1.25.0")
    st = status_of(rows, "KB901")[("onnxruntime", "1.25.0")]
    assert st["status"] == "not-checked"
    assert st["detail"].endswith("nearest measured: 1.20.0 reproduces, 1.32.0 fixed")


def test_status_for_an_engine_the_problem_does_not_concern(scale_entry, scan):
    _, rows = scan(deconv_scale_buried(), "ncnn==1.0.20261020", "onnxruntime")
    st = status_of(rows, "KB901")
    assert st[("ncnn", "1.0.20261020")]["status"] == "not-concerned"
    assert st[("onnxruntime", "1.32.0")]["status"] == "fixed"  # a bare engine name: its newest version


def test_status_comes_from_records_too(scale_entry, scan, monkeypatch, tmp_path):
    from datetime import datetime, timezone

    from kb.records import Record, RecordStore

    monkeypatch.setenv("KB_RECORDS", str(tmp_path / "records"))
    RecordStore().append(Record(
        id=Record.new_id(), entry="fake-custom-op-broadcast", check="convert", kind="bug",
        engine="onnxruntime", engine_version="1.33.0", verdict="reproduces", signature="broadcast-error",
        detail="again", versions={}, platform="test", started=datetime.now(timezone.utc), duration=1.0))
    _, rows = scan(deconv_scale_buried())
    assert status_of(rows, "KB901")[("onnxruntime", "1.33.0")]["status"] == "reproduces"


def test_text_output_names_entry_nodes_status_page_and_workaround(tmp_path, capsys):
    path = tmp_path / "decoder.onnx"
    onnx.save(deconv_scale_buried(), str(path))
    assert scan_command(str(path), [], False) == codes.FOUND
    out = capsys.readouterr().out
    assert "KB901  Fake: a custom op before InstanceNormalization fails with 'Broad cast error'" in out
    assert ("deconv=/decoder/up3/ConvTranspose, mul=/decoder/up3/scale/Mul, add=/decoder/up3/scale/Add") in out
    assert "status: onnxruntime 1.32.0: reproduces" in out
    assert "page: http://127.0.0.1:8000/fake-custom-op-broadcast/" in out
    assert "verified workaround (onnxruntime 1.32.0): Export the custom op" in out


@pytest.mark.parametrize("spec", ["tensorrt==8.6", "mnn>=3.0", "==3.6.1", "mnn==3.6.1==2"])
def test_bad_engine_option(spec, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(plain_convnet(), str(path))
    with pytest.raises(KBError) as e:
        scan_command(str(path), [spec], False)
    assert e.value.code == codes.BAD_ENGINE and "--engine" in str(e.value)


# ---- real architectures (BERT, ConvNeXt) against the real corpus, for one engine ------------------

I64 = TensorProto.INT64


def _w(name, *dims, dtype=np.float32):
    return numpy_helper.from_array(np.full(dims, 0.5, dtype), name)


def _i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _n(op, ins, out, name, **attrs):
    return helper.make_node(op, ins, [out], name=name, **attrs)


def gelu(p, x):
    """nn.GELU() at opset 17: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    return [_n("Div", [x, "sqrt2"], f"{p}.d", f"{p}/Div"), _n("Erf", [f"{p}.d"], f"{p}.e", f"{p}/Erf"),
            _n("Add", [f"{p}.e", "one"], f"{p}.a", f"{p}/Add"), _n("Mul", [x, f"{p}.a"], f"{p}.m", f"{p}/Mul"),
            _n("Mul", [f"{p}.m", "half"], f"{p}.y", f"{p}/Mul_1")], f"{p}.y"


def linear(p, x, w):
    return [_n("MatMul", [x, w], f"{p}.mm", f"{p}/MatMul"), _n("Add", [f"{p}.b", f"{p}.mm"], f"{p}.y", f"{p}/Add")], \
        f"{p}.y"


def bert_like(layers=2, dim=8, heads=2, seq=4):
    inits = [_w("word", 30, dim), _w("pos", seq, dim), _i64("pos_ids", [list(range(seq))]), _w("ln.w", dim),
             _w("ln.b", dim), _w("sqrt2", 1), _w("one", 1), _w("half", 1), _w("scale", 1), _w("neg", 1),
             _i64("heads_shape", [1, seq, heads, dim // heads]), _i64("merge_shape", [1, seq, dim])]
    nodes = [_n("Gather", ["word", "input_ids"], "we", "/embeddings/word_embeddings/Gather"),
             _n("Gather", ["pos", "pos_ids"], "pe", "/embeddings/position_embeddings/Gather"),
             _n("Add", ["we", "pe"], "emb", "/embeddings/Add"),
             _n("LayerNormalization", ["emb", "ln.w", "ln.b"], "h0", "/embeddings/LayerNorm/LayerNormalization",
                axis=-1, epsilon=1e-12),
             _n("Unsqueeze", ["attention_mask", "axes12"], "m4", "/Unsqueeze"),
             _n("Cast", ["m4"], "mf", "/Cast", to=F),
             _n("Sub", ["one", "mf"], "inv", "/Sub"), _n("Mul", ["inv", "neg"], "bias", "/Mul")]
    inits.append(_i64("axes12", [1, 2]))
    h = "h0"
    for i in range(layers):
        p = f"/encoder/layer.{i}"
        heads_of = {}
        for part in ("query", "key", "value"):
            ns, y = linear(f"{p}/attention/self/{part}", h, f"{p}.{part}.w")
            nodes += ns + [_n("Reshape", [y, "heads_shape"], f"{p}.{part}.r", f"{p}/attention/self/{part}/Reshape")]
            inits += [_w(f"{p}.{part}.w", dim, dim), _w(f"{p}/attention/self/{part}.b", dim)]
            heads_of[part] = f"{p}.{part}.r"
        a = f"{p}/attention/self"
        nodes += [_n("Transpose", [heads_of["query"]], f"{p}.q", f"{a}/Transpose", perm=[0, 2, 1, 3]),
                  _n("Transpose", [heads_of["key"]], f"{p}.k", f"{a}/Transpose_1", perm=[0, 2, 3, 1]),
                  _n("Transpose", [heads_of["value"]], f"{p}.v", f"{a}/Transpose_2", perm=[0, 2, 1, 3]),
                  _n("MatMul", [f"{p}.q", f"{p}.k"], f"{p}.s", f"{a}/MatMul"),
                  _n("Div", [f"{p}.s", "scale"], f"{p}.sd", f"{a}/Div"),
                  _n("Add", [f"{p}.sd", "bias"], f"{p}.sm", f"{a}/Add"),
                  _n("Softmax", [f"{p}.sm"], f"{p}.pr", f"{a}/Softmax", axis=-1),
                  _n("MatMul", [f"{p}.pr", f"{p}.v"], f"{p}.c", f"{a}/MatMul_1"),
                  _n("Transpose", [f"{p}.c"], f"{p}.ct", f"{a}/Transpose_3", perm=[0, 2, 1, 3]),
                  _n("Reshape", [f"{p}.ct", "merge_shape"], f"{p}.cm", f"{a}/Reshape")]
        ns, y = linear(f"{p}/attention/output/dense", f"{p}.cm", f"{p}.o.w")
        nodes += ns + [_n("Add", [y, h], f"{p}.r1", f"{p}/attention/output/Add"),
                       _n("LayerNormalization", [f"{p}.r1", "ln.w", "ln.b"], f"{p}.h1",
                          f"{p}/attention/output/LayerNorm/LayerNormalization", axis=-1, epsilon=1e-12)]
        ns, y = linear(f"{p}/intermediate/dense", f"{p}.h1", f"{p}.i.w")
        g, gy = gelu(f"{p}/intermediate/intermediate_act_fn", y)
        ns2, y2 = linear(f"{p}/output/dense", gy, f"{p}.out.w")
        nodes += ns + g + ns2 + [_n("Add", [y2, f"{p}.h1"], f"{p}.r2", f"{p}/output/Add"),
                                 _n("LayerNormalization", [f"{p}.r2", "ln.w", "ln.b"], f"{p}.h2",
                                    f"{p}/output/LayerNorm/LayerNormalization", axis=-1, epsilon=1e-12)]
        inits += [_w(f"{p}.o.w", dim, dim), _w(f"{p}/attention/output/dense.b", dim), _w(f"{p}.i.w", dim, 4 * dim),
                  _w(f"{p}/intermediate/dense.b", 4 * dim), _w(f"{p}.out.w", 4 * dim, dim),
                  _w(f"{p}/output/dense.b", dim)]
        h = f"{p}.h2"
    g = helper.make_graph(nodes, "bert", [helper.make_tensor_value_info("input_ids", I64, [1, seq]),
                                          helper.make_tensor_value_info("attention_mask", I64, [1, seq])],
                          [helper.make_tensor_value_info(h, F, [1, seq, dim])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def convnext_like(dims=(8, 16), ln2d_kind="transpose"):
    """ConvNeXt: a 4x4 stem, a channels-first LayerNorm (`ln2d_kind`: "transpose" = permute -> LayerNorm ->
    permute as torchvision / timm write it; "pow" = (x - u).pow(2).mean(1) as the paper's code), blocks of
    depthwise 7x7 Conv -> permute -> LayerNorm -> Linear -> GELU -> Linear -> gamma -> permute + x, and
    GlobalAveragePool -> LayerNorm -> Gemm."""
    inits = [_w("sqrt2", 1), _w("one", 1), _w("half", 1), _w("two", 1), _w("eps", 1)]
    nodes, x = [], "input"

    def ln2d(p, x, c):
        if ln2d_kind == "transpose":
            inits.extend([_w(f"{p}.w", c), _w(f"{p}.b", c)])
            return [_n("Transpose", [x], f"{p}.t", f"{p}/Transpose", perm=[0, 2, 3, 1]),
                    _n("LayerNormalization", [f"{p}.t", f"{p}.w", f"{p}.b"], f"{p}.n", f"{p}/LayerNormalization",
                       axis=-1, epsilon=1e-6),
                    _n("Transpose", [f"{p}.n"], f"{p}.y", f"{p}/Transpose_1", perm=[0, 3, 1, 2])], f"{p}.y"
        return [_n("ReduceMean", [x], f"{p}.u", f"{p}/ReduceMean", axes=[1]),
                _n("Sub", [x, f"{p}.u"], f"{p}.d", f"{p}/Sub"),
                _n("Pow", [f"{p}.d", "two"], f"{p}.sq", f"{p}/Pow"),
                _n("ReduceMean", [f"{p}.sq"], f"{p}.s", f"{p}/ReduceMean_1", axes=[1]),
                _n("Add", [f"{p}.s", "eps"], f"{p}.se", f"{p}/Add"),
                _n("Sqrt", [f"{p}.se"], f"{p}.sd", f"{p}/Sqrt"),
                _n("Div", [f"{p}.d", f"{p}.sd"], f"{p}.y", f"{p}/Div")], f"{p}.y"

    c_in = 3
    for s, c in enumerate(dims):
        p = f"/features.{2 * s}"
        conv = _n("Conv", [x, f"{p}.cw", f"{p}.cb"], f"{p}.c", f"{p}/Conv", kernel_shape=[4, 4] if s == 0 else [2, 2],
                  strides=[4, 4] if s == 0 else [2, 2])
        inits += [_w(f"{p}.cw", c, c_in, *([4, 4] if s == 0 else [2, 2])), _w(f"{p}.cb", c)]
        if s == 0:
            ns, x = ln2d(f"{p}/norm", f"{p}.c", c)
            nodes += [conv] + ns
        else:
            ns, y = ln2d(f"{p}/norm", x, c_in)
            nodes += ns + [_n("Conv", [y, f"{p}.cw", f"{p}.cb"], f"{p}.c", f"{p}/Conv", kernel_shape=[2, 2],
                              strides=[2, 2])]
            x = f"{p}.c"
        b = f"/features.{2 * s + 1}/block"
        inits += [_w(f"{b}.dw", c, 1, 7, 7), _w(f"{b}.dwb", c), _w(f"{b}.lnw", c), _w(f"{b}.lnb", c),
                  _w(f"{b}.w1", c, 4 * c), _w(f"{b}/pw1.b", 4 * c), _w(f"{b}.w2", 4 * c, c), _w(f"{b}/pw2.b", c),
                  _w(f"{b}.gamma", c)]
        nodes += [_n("Conv", [x, f"{b}.dw", f"{b}.dwb"], f"{b}.dc", f"{b}/Conv", group=c, kernel_shape=[7, 7],
                     pads=[3, 3, 3, 3]),
                  _n("Transpose", [f"{b}.dc"], f"{b}.t", f"{b}/Transpose", perm=[0, 2, 3, 1]),
                  _n("LayerNormalization", [f"{b}.t", f"{b}.lnw", f"{b}.lnb"], f"{b}.n", f"{b}/LayerNormalization",
                     axis=-1, epsilon=1e-6)]
        ns, y = linear(f"{b}/pw1", f"{b}.n", f"{b}.w1")
        g, gy = gelu(f"{b}/act", y)
        ns2, y2 = linear(f"{b}/pw2", gy, f"{b}.w2")
        nodes += ns + g + ns2 + [_n("Mul", [f"{b}.gamma", y2], f"{b}.sc", f"{b}/Mul"),
                                 _n("Transpose", [f"{b}.sc"], f"{b}.tb", f"{b}/Transpose_1", perm=[0, 3, 1, 2]),
                                 _n("Add", [f"{b}.tb", x], f"{b}.y", f"{b}/Add")]
        x, c_in = f"{b}.y", c
    inits += [_w("head.lnw", c_in), _w("head.lnb", c_in), _w("head.w", 10, c_in), _w("head.b", 10)]
    nodes += [_n("GlobalAveragePool", [x], "gap", "/avgpool/GlobalAveragePool"),
              _n("Flatten", ["gap"], "flat", "/classifier/Flatten"),
              _n("LayerNormalization", ["flat", "head.lnw", "head.lnb"], "hn", "/classifier/LayerNormalization",
                 axis=-1, epsilon=1e-6),
              _n("Gemm", ["hn", "head.w", "head.b"], "logits", "/classifier/Gemm", transB=1)]
    g = helper.make_graph(nodes, "convnext", [helper.make_tensor_value_info("input", F, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("logits", F, [1, 10])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


# The real entries these models match, copied into a corpus of their own: adding an entry to repros/ must not
# change what these tests assert.
MATCHED = ["mnn-layernormalization-opset17", "mnn-quant-kl-multi-axis-reduce-crash", "ncnn-onnx2ncnn-embedding-gather",
           "ncnn-onnx2ncnn-layernorm", "ncnn-onnx2ncnn-linear-on-4d", "ncnn-onnx2ncnn-matmul-4d",
           "ncnn-onnx2ncnn-softmax-negative-axis", "ncnn-onnx2ncnn-squeeze-unsqueeze-axes",
           "ncnn-onnx2ncnn-unconverted-ops", "pnnx-attention-mask-ops"]


@pytest.fixture
def real_kb(tmp_path, monkeypatch):
    """Those real entries, their statuses from the accepted expected.yaml only (no records)."""
    import shutil

    root = tmp_path / "real"
    for slug in [*MATCHED, "_messages"]:
        shutil.copytree(ROOT / "repros" / slug, root / "repros" / slug, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("KB_ROOT", str(root))
    return root


def scan_both(m, tmp_path, capsys, *engines):
    """(exit code, text), then (exit code, JSON rows) of one model."""
    path = tmp_path / "model.onnx"
    onnx.save(m, str(path))
    text = scan_command(str(path), list(engines), False), capsys.readouterr().out
    return text, (scan_command(str(path), list(engines), True), json.loads(capsys.readouterr().out))


def listed(text):
    """The entry ids the text lists, in order."""
    return [line.split()[0] for line in text.splitlines() if line[:2] == "KB" and line[2:5].isdigit()]


def test_bert_for_mnn_lists_only_mnn_problems_and_exits_zero(real_kb, tmp_path, capsys):
    """A BERT export matches LayerNormalization, the embedding Gather, the attention MatMul and Softmax
    patterns: all but one entry concern ncnn / onnx2ncnn / pnnx, and MNN's (KB025) is fixed on 3.6.1."""
    m = bert_like()
    onnx.checker.check_model(m, full_check=True)
    (code, text), (jcode, rows) = scan_both(m, tmp_path, capsys, "mnn==3.6.1")
    assert listed(text) == ["KB025"] and code == jcode == codes.NOTHING_FOUND
    assert "status: mnn 3.6.1: fixed" in text and "none affects mnn 3.6.1" in text
    assert "layernormalization-op ×5: /embeddings/LayerNorm/LayerNormalization, " in text
    left = {r["id"] for r in rows if not r["concerns"]}
    assert {"KB004", "KB048", "KB059", "KB060"} <= left  # ncnn's, still in --json
    assert f"{len(left)} known problems of other engines (ncnn, onnx2ncnn, pnnx) left out" in text
    assert not any(r["affects"] for r in rows)
    # without --engine: every problem, and today's rule (ncnn's reproduce on its newest release)
    (code, text), _ = scan_both(m, tmp_path, capsys)
    assert code == codes.FOUND and listed(text)[:2] == ["KB004", "KB025"] and "left out" not in text


def test_bert_for_two_engines_lists_the_first_named_ones_first(real_kb, tmp_path, capsys):
    (_, text), _ = scan_both(bert_like(), tmp_path, capsys, "mnn==3.6.1", "ncnn")
    assert listed(text)[0] == "KB025" and "KB004" in listed(text)
    (code, text), _ = scan_both(bert_like(), tmp_path, capsys, "ncnn", "mnn==3.6.1")
    ids = listed(text)  # those concerning ncnn first, the ones reproducing on its newest release first of all
    assert ids[:4] == ["KB004", "KB034", "KB048", "KB059"] and ids[-1] == "KB025"
    assert code == codes.FOUND  # ncnn's own problems reproduce on its newest release


def test_convnext_for_mnn(real_kb, tmp_path, capsys):
    """torchvision's ConvNeXt (LayerNorm2d as permute -> LayerNorm -> permute): only MNN's fixed
    LayerNormalization entry concerns MNN, so 0. The paper's (x - u).pow(2).mean(1) LayerNorm2d matches
    KB033 (mnnquant KL crashes on it), which reproduces on 3.6.1: listed first, and 1."""
    m = convnext_like()
    onnx.checker.check_model(m, full_check=True)
    (code, text), (_, rows) = scan_both(m, tmp_path, capsys, "mnn==3.6.1")
    assert code == codes.NOTHING_FOUND and listed(text) == ["KB025"]
    assert {r["id"] for r in rows if not r["concerns"]} == {"KB004", "KB020"}
    (code, text), _ = scan_both(convnext_like(ln2d_kind="pow"), tmp_path, capsys, "mnn==3.6.1")
    assert code == codes.FOUND and listed(text) == ["KB033", "KB025"]
    assert "affects mnn 3.6.1: KB033" in text
    assert "channels-first-layernorm ×2: /features.0/norm/Div, /features.2/norm/Div" in text
    assert "status: mnn 3.6.1: reproduces (in 1 of 1 bug checks: kl-channels-first-layernorm) [affects this release]" \
        in text
    # pnnx is KB004's and KB020's workaround: only workaround checks run it, and they work
    (code, text), _ = scan_both(m, tmp_path, capsys, "pnnx")
    assert code == codes.NOTHING_FOUND and listed(text) == ["KB004", "KB020"]
    assert text.count(": workaround-works (") == 2


# ---- models exported from torch (dynamo=False), and torch files ------------------------------

@pytest.fixture(scope="module")
def torch():
    """Imported by the tests that use it, not at collection, which every xdist worker does (4 s each)."""
    return pytest.importorskip("torch")


def decoder(torch, groups):
    """Not the reproducer: a grouped deconv, then a learned per-channel gain and bias (a Scale)."""
    nn = torch.nn

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 6, 3, padding=1)
            self.up = nn.ConvTranspose2d(6, 12, 4, stride=2, padding=1, groups=groups)
            self.gain = nn.Parameter(torch.rand(1, 12, 1, 1))
            self.bias = nn.Parameter(torch.rand(1, 12, 1, 1))
            self.out = nn.Conv2d(12, 2, 1)

        def forward(self, x):
            return self.out(torch.relu(self.up(torch.relu(self.stem(x))) * self.gain + self.bias))

    return Decoder()


def torch_export(torch, module, path, opset=13):
    torch.onnx.export(module.eval(), (torch.randn(1, 3, 8, 8),), str(path), dynamo=False, opset_version=opset,
                      input_names=["image"], output_names=["mask"])
    return path


def test_torch_exported_positive(torch, tmp_path, capsys):
    path = torch_export(torch, decoder(torch, groups=3), tmp_path / "decoder.onnx", opset=17)
    assert scan_command(str(path), [], True) == codes.FOUND
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["id"], row["pattern"]) == ("KB901", "grouped-deconv-scale")
    assert row["roles"] == {"deconv": "/up/ConvTranspose", "mul": "/Mul", "add": "/Add"}


def test_torch_exported_clean(torch, tmp_path, capsys):
    path = torch_export(torch, decoder(torch, groups=1), tmp_path / "decoder.onnx")
    assert scan_command(str(path), [], True) == codes.NOTHING_FOUND
    assert json.loads(capsys.readouterr().out) == []


def test_torch_export_program_is_exported_then_scanned(torch, tmp_path, capsys):
    """A torch.export program goes through the ONNX exporter's defaults, then is scanned like any model."""
    class Centred(torch.nn.Module):
        def forward(self, x):
            return torch.sqrt(x - 10.0)

    path = tmp_path / "centred.pt2"
    torch.export.save(torch.export.export(Centred().eval(), (torch.randn(2, 8),)), str(path))
    assert scan_command(str(path), [], True) == codes.FOUND
    out = capsys.readouterr()
    assert [r["pattern"] for r in json.loads(out.out)] == ["sub-into-sqrt"]
    assert "torch.export program" in out.err


@pytest.mark.parametrize("kind", ["torchscript", "checkpoint"])
def test_torch_files_that_cannot_be_scanned(torch, kind, tmp_path):
    path = tmp_path / "model.pt"
    if kind == "torchscript":
        torch.jit.trace(decoder(torch, 2).eval(), torch.randn(1, 3, 8, 8)).save(str(path))
    else:
        torch.save(decoder(torch, 2).state_dict(), str(path))
    with pytest.raises(KBError) as e:
        scan_command(str(path), [], False)
    assert e.value.code == codes.CANNOT_SCAN
    assert "torch.onnx.export" in e.value.problem  # says what to do instead


# ---- bad input: one line naming the file, a code of its own ----------------------------------

def valid_bytes():
    return plain_convnet().SerializeToString()


def bad_inputs(tmp_path):
    """name -> (path, expected code)."""
    cases = {}

    def file(name, data):
        p = tmp_path / name
        p.write_bytes(data)
        return p

    data = valid_bytes()
    cases["missing"] = (tmp_path / "nope.onnx", codes.MISSING)
    cases["directory"] = (tmp_path, codes.IS_DIRECTORY)
    cases["truncated"] = (file("cut.onnx", data[: len(data) // 2]), codes.CORRUPT_MODEL)
    m = plain_convnet()
    del m.opset_import[:]  # the same model cut right after its graph
    cases["cut-after-graph"] = (file("cut2.onnx", m.SerializeToString()), codes.CORRUPT_MODEL)
    cases["corrupt"] = (file("bad.onnx", data[:40] + bytes(range(256)) * 4), codes.CORRUPT_MODEL)
    cases["text"] = (file("notes.onnx", b"These Op Not Support: ONNX::Foo\nConverted Failed!\n"), codes.NOT_A_MODEL)
    cases["image"] = (file("cat.onnx", b"\x89PNG\r\n\x1a\n" + bytes(500)), codes.NOT_A_MODEL)
    cases["random-binary"] = (file("blob.bin", b"\xde\xad\xbe\xef" * 300), codes.NOT_A_MODEL)
    cases["empty"] = (file("empty.onnx", b""), codes.NOT_A_MODEL)
    cases["zip-of-other"] = (file("a.zip", b"PK\x03\x04" + bytes(60)), codes.CORRUPT_MODEL)
    huge = tmp_path / "huge.onnx"
    with huge.open("wb") as f:  # sparse: 2 GiB of nothing, beyond what protobuf can parse
        f.truncate(2**31 + 10)
    cases["too-large"] = (huge, codes.MODEL_TOO_LARGE)
    return cases


BAD = ["missing", "directory", "truncated", "cut-after-graph", "corrupt", "text", "image", "random-binary", "empty",
       "zip-of-other", "too-large"]


@pytest.mark.parametrize("case", BAD)
def test_bad_model_files(case, tmp_path):
    path, code = bad_inputs(tmp_path)[case]
    with pytest.raises(KBError) as e:
        scan_command(str(path), [], False)
    assert e.value.code == code
    assert str(path.name) in str(e.value) and "\n" not in str(e.value)


def external_model(tmp_path):
    m = plain_convnet()
    path = tmp_path / "ext" / "model.onnx"
    path.parent.mkdir()
    onnx.save_model(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                    size_threshold=0)
    return path


def test_external_data_present_is_fine(tmp_path, capsys):
    assert scan_command(str(external_model(tmp_path)), [], False) == codes.NOTHING_FOUND


def test_external_data_missing(tmp_path):
    path = external_model(tmp_path)
    (path.parent / "weights.bin").unlink()
    with pytest.raises(KBError) as e:
        scan_command(str(path), [], False)
    assert e.value.code == codes.EXTERNAL_DATA_MISSING
    assert "'weights.bin' is missing" in e.value.problem


def test_external_data_truncated(tmp_path):
    path = external_model(tmp_path)
    data = path.parent / "weights.bin"
    data.write_bytes(data.read_bytes()[:10])
    with pytest.raises(KBError) as e:
        scan_command(str(path), [], False)
    assert e.value.code == codes.EXTERNAL_DATA_MISSING and "truncated" in e.value.problem


def test_the_codes_are_distinct():
    values = [v for k, v in vars(codes).items() if k.isupper()]
    assert len(values) == len(set(values))



# ---- speed: linear in graph size --------------------------------------------------------------

BLOCK = 12


def synthetic(n):
    """About `n` nodes of a 12-node block full of near misses of the fixture patterns (a grouped
    ConvTranspose into a Mul of activations, Sigmoid into Conv, a standard op into InstanceNormalization,
    x - mean squared by Mul then Sqrt); every 83rd block squares with Pow of a constant: one true match."""
    inits = [weight(k) for k in ("W", "B", "s", "b", "m", "v", "Wd", "two")]
    inits.append(helper.make_tensor("shape", TensorProto.INT64, [1], [-1]))
    out, prev = [], "x"
    for k in range(max(1, n // BLOCK)):
        t = [f"b{k}_t{i}" for i in range(BLOCK + 1)]
        t[0] = prev
        square = ("Pow", [t[7], "two"]) if k % 83 == 82 else ("Mul", [t[7], t[7]])
        specs = [
            ("Conv", [t[0], "W", "B"], {}),
            ("BatchNormalization", [t[1], "s", "b", "m", "v"], {}),
            ("Relu", [t[2]], {}),
            ("ConvTranspose", [t[3], "Wd"], {"group": 2}),
            ("Mul", [t[4], t[3]], {}),
            ("ReduceMean", [t[5]], {"axes": [1]}),
            ("Sub", [t[5], t[6]], {}),
            (square[0], square[1], {}),
            ("Sqrt", [t[8]], {}),
            ("Reshape", [t[9], "shape"], {}),
            ("InstanceNormalization", [t[10], "s", "b"], {}),
            ("Sigmoid", [t[11]], {}),
        ]
        for i, (op, ins, attrs) in enumerate(specs):
            out.append(helper.make_node(op, ins, [t[i + 1]], name=f"/block{k}/{op}_{i}", **attrs))
        prev = t[BLOCK]
    g = helper.make_graph(out, "synthetic", [helper.make_tensor_value_info("x", F, None)],
                          [helper.make_tensor_value_info(prev, F, None)], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_scan_is_fast_and_linear():
    from kb.entries import load_all

    entries = load_all()

    def timed(n):
        """CPU time of the best of three scans: other processes' load does not count."""
        m = synthetic(n)
        runs = []
        for _ in range(3):
            start = time.process_time()
            found = find_problems(entries, m)
            runs.append(time.process_time() - start)
        return min(runs), found

    small, found = timed(10_000)
    assert small < 1.0
    assert len(found.found) == 10_000 // 12 // 83  # one true match every 83 blocks, no false ones
    assert {(f.entry.meta.id, f.match.pattern) for f in found.found} == {("KB903", "pow-of-difference")}
    large, _ = timed(80_000)
    assert large < 24 * max(small, 0.02)  # 8x the nodes: about 8x the time (noise allowed), not 64x


# ---- through the command line -----------------------------------------------------------------

def kb(*args):
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True, cwd=ROOT,
                          env=os.environ)  # KB_ROOT: the fixture corpus


def test_cli_scan_json_and_exit_code(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(sqrt_of_a_state_input_opset7(), str(path))
    p = kb("scan", str(path), "--json")
    assert p.returncode == codes.FOUND, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["entry"] == "fake-pow-nan" and row["nodes"] == ["encoder.norm"]
    # KB903 concerns ncnn: it does not affect onnxruntime, whatever the status its checks have there
    p = kb("scan", str(path), "--engine", "onnxruntime==1.32.0", "--json")
    assert p.returncode == codes.NOTHING_FOUND, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["concerns"] is False and row["status"][0]["status"] == "reproduces"
    clean = tmp_path / "clean.onnx"
    onnx.save(plain_convnet(), str(clean))
    assert kb("scan", str(clean)).returncode == codes.NOTHING_FOUND
    guard = tmp_path / "guard.onnx"
    onnx.save(silu_in_a_block(), str(guard))
    p = kb("scan", str(guard))
    assert p.returncode == codes.NOTHING_FOUND, p.stderr
    assert "KB902" in p.stdout and "(a regression guard: fixed where measured)" in p.stdout


@pytest.mark.parametrize("case", ["missing", "directory", "truncated", "text", "empty"])
def test_cli_bad_input_is_one_line(case, tmp_path):
    path, code = bad_inputs(tmp_path)[case]
    p = kb("scan", str(path))
    assert p.returncode == code
    assert len(p.stderr.strip().splitlines()) == 1 and path.name in p.stderr
    assert "Traceback" not in p.stderr


def test_a_problem_no_graph_pattern_predicts_is_named_as_not_scanned_for(fixture_corpus, tmp_path, capsys):
    """An engine bug with `untriggered` (no trigger) is never reported as found, and the text says it was not
    looked for, with its page, so a clean result is not read as 'safe from it'."""
    page = fixture_corpus / "repros" / KB["KB903"] / "README.md"
    text = page.read_text()
    start, end = text.index("trigger:\n"), text.index("signatures:\n")
    page.write_text(text[:start] + "untriggered: whether it happens depends on the values\n" + text[end:])
    path = tmp_path / "net.onnx"
    onnx.save(plain_convnet(), str(path))
    assert scan_command(str(path), [], False) == codes.NOTHING_FOUND
    out = capsys.readouterr().out
    assert "no known problem found" in out
    assert "Not predictable from a model's graph, so not scanned for:" in out and "KB903" in out
    assert f"/{KB['KB903']}/" in out


def _resize(path, **attrs):
    import onnx.helper as h
    from onnx import TensorProto as T

    node = h.make_node("Resize", ["x", "", "scales"], ["y"], name="resize_user", **attrs)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 2, 2])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)], [h.make_tensor("scales", T.FLOAT, [4], [1, 1, 2, 2])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), str(path))
    return path


@pytest.mark.parametrize("attrs, listed", [
    # ONNX's test_resize_upsample_scales_linear_half_pixel_symmetric fails on MNN 3.6.1 (conformance/mnn.yaml)
    (dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric"), True),
    (dict(mode="linear"), False),  # half_pixel by default: another case, which works
    # every engine and onnxruntime differ from ONNX's reference here: disputed, never reported
    (dict(mode="cubic", coordinate_transformation_mode="align_corners"), False),
])
def test_a_node_whose_node_test_fails_is_listed_below_the_entries(tmp_path, attrs, listed):
    model = _resize(tmp_path / "m.onnx", **attrs)
    root = tmp_path / "root"  # the real conformance ledgers and no entry: an entry added later cannot claim the node
    (root / "repros").mkdir(parents=True)
    (root / "conformance").symlink_to(ROOT / "conformance")
    p = subprocess.run([sys.executable, "-m", "kb", "scan", str(model), "--engine", "mnn==3.6.1"], capture_output=True,
                       text=True, cwd=root, env={**os.environ, "KB_ROOT": str(root)}, timeout=120)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr
    said = "at node 'resize_user': wrong values on MNN 3.6.1 in ONNX's own test test_resize_upsample_scales_linear_half"
    assert (said in p.stdout) == listed, p.stdout
    assert ("ONNX's own node tests" in p.stdout) == listed, p.stdout
