"""`kb scan`: every known problem's pattern is found wherever it hides, clean models stay clean,
and bad input gets one line and its own exit code."""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper, numpy_helper

from kb.errors import KBError
from kb.match import codes
from kb.match.scan import find_problems, scan_command

ROOT = Path(__file__).resolve().parent.parent
F = TensorProto.FLOAT


@pytest.fixture(autouse=True)
def no_records(tmp_path, monkeypatch):
    """Statuses come from the committed expected.yaml only, not from whatever runs left behind."""
    monkeypatch.setenv("KB_RECORDS", str(tmp_path / "records"))


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


def gru(h0, name="/rnn/GRU", x="x"):
    return node("GRU", [x, "W", "R", "B", "", h0], "seq", name, hidden_size=4)


GRU_WEIGHTS = [weight("W", 1, 12, 4), weight("R", 1, 12, 4), weight("B", 1, 24)]


def layer_norm_by_hand(prefix, prev, square):
    """x - mean(x), squared with `square` ('Pow' with a constant 2, or 'Mul' by itself)."""
    sq = (node("Pow", [f"{prefix}.d", "two"], f"{prefix}.sq", f"{prefix}/Pow") if square == "Pow"
          else node("Mul", [f"{prefix}.d", f"{prefix}.d"], f"{prefix}.sq", f"{prefix}/Mul"))
    return [node("ReduceMean", [prev], f"{prefix}.m", f"{prefix}/ReduceMean", axes=[1]),
            node("Sub", [prev, f"{prefix}.m"], f"{prefix}.d", f"{prefix}/Sub"), sq,
            node("ReduceMean", [f"{prefix}.sq"], f"{prefix}.v", f"{prefix}/ReduceMean_1", axes=[1])]


# ---- clean models: no known pattern, so nothing may be reported ------------------------------

def plain_convnet():
    nodes, last, inits = convnet(depth=5)
    hn, hw = head(last)
    return model(nodes + hn, inits=inits + hw)


def deconv_without_bn():
    nodes, last, inits = convnet(depth=2)
    nodes.append(node("ConvTranspose", [last, "wd"], "up", "/decoder/ConvTranspose", group=4, strides=[2, 2]))
    nodes.append(node("Sigmoid", ["up"], "y", "/decoder/Sigmoid"))
    return model(nodes, inits=inits + [weight("wd", 4, 1, 3, 3)])


def grouped_deconv_relu():
    nodes = [node("ConvTranspose", ["x", "wd"], "up", "/up/ConvTranspose", group=8),
             node("Relu", ["up"], "y", "/up/Relu")]
    return model(nodes, inits=[weight("wd", 8, 1, 3, 3)])


def ungrouped_deconv_bn():
    nodes = [node("ConvTranspose", ["x", "wd"], "up", "/up/ConvTranspose", group=1),
             node("BatchNormalization", ["up", "s", "b", "m", "v"], "y", "/up/BatchNormalization")]
    return model(nodes, inits=[weight(n, 4) for n in ("wd", "s", "b", "m", "v")])


def grouped_deconv_times_activation():
    # Mul by another activation and Add of one: not a per-channel Scale, so nothing to fold
    nodes = [node("ConvTranspose", ["x", "wd"], "up", "/up/ConvTranspose", group=2),
             node("Sigmoid", ["x"], "gate", "/gate/Sigmoid"),
             node("Mul", ["up", "gate"], "g", "/up/Mul"),
             node("Add", ["g", "x"], "y", "/up/Add")]
    return model(nodes, inits=[weight("wd", 4, 2, 3, 3)])


def fp32_without_qdq():
    nodes, last, inits = convnet(depth=2, start="images")
    return model(nodes, inputs=("images",), inits=inits)


def qdq_on_an_activation():
    # Q/DQ that does not read a model input (the pattern is the model input quantized straight into a Conv)
    nodes = [node("Relu", ["x"], "r", "/stem/Relu"),
             node("QuantizeLinear", ["r", "sc", "zp"], "q", "/stem/Q"),
             node("DequantizeLinear", ["q", "sc", "zp"], "dq", "/stem/DQ"),
             node("Conv", ["dq", "w"], "y", "/stem/Conv")]
    zp = helper.make_tensor("zp", TensorProto.UINT8, [], [0])
    return model(nodes, inits=[weight("sc"), zp, weight("w", 4, 4, 3, 3)])


def gru_constant_h0():
    return model([gru("h0")], inits=GRU_WEIGHTS + [weight("h0", 1, 1, 4)])


def gru_constant_h0_listed_as_input():
    # Exporters with keep_initializers_as_inputs list every weight, h0 too, among the graph inputs.
    return model([gru("h0")], inputs=("x", "W", "R", "B", "h0"), inits=GRU_WEIGHTS + [weight("h0", 1, 1, 4)])


def gru_h0_from_constant_node():
    h0 = helper.make_node("Constant", [], ["h0"], name="/rnn/h0", value=weight("h0v", 1, 1, 4))
    return model([h0, gru("h0")], inits=GRU_WEIGHTS)


def gru_without_h0():
    return model([node("GRU", ["x", "W", "R", "B"], "seq", "/rnn/GRU", hidden_size=4)], inits=GRU_WEIGHTS)


def groupnorm_of_standard_ops():
    nodes = [node("Concat", ["x", "x"], "c", "/cat/Concat", axis=1),
             node("Reshape", ["c", "shape"], "r", "/gn/Reshape"),
             node("InstanceNormalization", ["r", "s", "b"], "y", "/gn/InstanceNormalization")]
    return model(nodes, inits=[helper.make_tensor("shape", TensorProto.INT64, [3], [1, 32, -1]),
                               weight("s", 32), weight("b", 32)])


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


CLEAN = [plain_convnet, deconv_without_bn, grouped_deconv_relu, ungrouped_deconv_bn, grouped_deconv_times_activation,
         fp32_without_qdq, qdq_on_an_activation, gru_constant_h0, gru_constant_h0_listed_as_input,
         gru_h0_from_constant_node, gru_without_h0, groupnorm_of_standard_ops, squared_difference_by_mul,
         pow_with_a_computed_exponent, clean_inside_if]


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

def deconv_bn_buried():
    """A grouped ConvTranspose + BN deep inside a bigger decoder, other names, group 8, opset 17."""
    nodes, last, inits = convnet("/encoder", depth=6)
    nodes += [node("ConvTranspose", [last, "wd"], "up", "/decoder/up3/ConvTranspose", group=8, strides=[2, 2]),
              node("BatchNormalization", ["up", "s", "b", "m", "v"], "upn", "/decoder/up3/bn/BatchNormalization")]
    more, last2, inits2 = convnet("/refine", depth=4, start="upn")
    hn, hw = head(last2)
    return model(nodes + more + hn, inits=inits + inits2 + hw + [weight(n, 8) for n in ("wd", "s", "b", "m", "v")])


def deconv_scale_with_constant_nodes():
    """The Scale variant, its factors coming from Constant nodes rather than initializers, opset 11."""
    nodes = [helper.make_node("Constant", [], ["k"], name="/scale/k", value=weight("kv", 1, 6, 1, 1)),
             helper.make_node("Constant", [], ["c"], name="/scale/c", value=weight("cv", 1, 6, 1, 1)),
             node("ConvTranspose", ["x", "wd"], "up", "deconv_2", group=3),
             node("Mul", ["up", "k"], "mu", "scale_mul"),
             node("Add", ["mu", "c"], "y", "scale_add")]
    return model(nodes, inits=[weight("wd", 6, 2, 4, 4)], opset=11)


def custom_op_into_groupnorm():
    """Another vendor's op (domain com.acme) into the exporter's GroupNorm decomposition."""
    nodes, last, inits = convnet("/stem", depth=1)
    nodes += [helper.make_node("ChannelShuffleX", [last], ["cs"], name="/mix/ChannelShuffleX", domain="com.acme"),
              node("Reshape", ["cs", "shape"], "r", "/norm1/Reshape"),
              node("InstanceNormalization", ["r", "s", "b"], "n", "/norm1/InstanceNormalization"),
              node("Relu", ["n"], "y", "/out/Relu")]
    return model(nodes, inits=inits + [helper.make_tensor("shape", TensorProto.INT64, [3], [1, 8, -1]),
                                       weight("s", 8), weight("b", 8)], domains=("com.acme",))


def custom_op_into_groupnormalization():
    """Opset 18's GroupNormalization after an op that is unknown in the default domain."""
    nodes = [node("FancyUpsample", ["x"], "u", "/up/FancyUpsample"),
             node("GroupNormalization", ["u", "s", "b"], "y", "/gn/GroupNormalization", num_groups=4)]
    return model(nodes, inits=[weight("s", 16), weight("b", 16)], opset=18)


def qdq_input_per_channel():
    """An onnxruntime-style QDQ model: input named 'images', per-channel weights, a bigger graph after."""
    zp = helper.make_tensor("zp", TensorProto.UINT8, [], [128])
    nodes = [node("QuantizeLinear", ["images", "sc", "zp"], "images_q", "images_QuantizeLinear"),
             node("DequantizeLinear", ["images_q", "sc", "zp"], "images_dq", "images_DequantizeLinear"),
             node("DequantizeLinear", ["w_q", "w_sc", "w_zp"], "w", "w_DequantizeLinear", axis=0),
             node("Conv", ["images_dq", "w"], "c0", "/model.0/conv/Conv")]
    more, last, inits = convnet("/model.1", depth=3, start="c0")
    w_q = helper.make_tensor("w_q", TensorProto.INT8, [4, 3, 3, 3], [1] * 108)
    w_zp = helper.make_tensor("w_zp", TensorProto.INT8, [4], [0] * 4)
    return model(nodes + more, inputs=("images",), inits=inits + [weight("sc"), zp, w_q, weight("w_sc", 4), w_zp])


def gru_state_input_opset7():
    """A streaming model: GRU state as a model input named 'state_in', with sequence lengths, opset 7."""
    nodes = [node("GRU", ["feats", "W", "R", "B", "lens", "state_in"], "seq", "encoder.rnn", hidden_size=4),
             node("Relu", ["seq"], "y", "encoder.act")]
    return model(nodes, inputs=("feats", "lens", "state_in"), inits=GRU_WEIGHTS, opset=7)


def layernorm_in_transformer_block():
    nodes = [node("MatMul", ["x", "wq"], "q", "/blocks.3/attn/MatMul"),
             node("Add", ["q", "x"], "res", "/blocks.3/Add"),
             node("LayerNormalization", ["res", "g", "b"], "ln", "/blocks.3/norm2/LayerNormalization", axis=-1),
             node("MatMul", ["ln", "wf"], "y", "/blocks.3/mlp/MatMul")]
    return model(nodes, inits=[weight("wq", 4, 4), weight("g", 4), weight("b", 4), weight("wf", 4, 4)])


def hand_layernorm_with_constant_exponent():
    two = helper.make_node("Constant", [], ["two"], name="/ln/two", value=helper.make_tensor("t", F, [], [2.0]))
    return model([two] + layer_norm_by_hand("/neck/ln", "x", "Pow"))


def patterns_inside_if_and_loop():
    """A grouped deconv + BN in an If branch; x - mean squared in a Loop body, with its exponent an
    initializer of the outer graph; a GRU in a branch whose h0 is the outer model's input."""
    then_body = graph([node("ConvTranspose", ["x", "wd"], "u", "/then/ConvTranspose", group=2),
                       node("BatchNormalization", ["u", "s", "b", "m", "v"], "t", "/then/BatchNormalization")],
                      inputs=(), name="then_body")
    else_body = graph([gru("h0", name="/else/GRU")], inputs=(), name="else_body")
    loop_body = helper.make_graph(
        [node("Sub", ["acc", "x"], "d", "/loop/Sub"), node("Pow", ["d", "two"], "acc_out", "/loop/Pow"),
         node("Identity", ["cond_in"], "cond_out", "/loop/cond")],
        "loop_body", [vi("i", TensorProto.INT64), vi("cond_in", TensorProto.BOOL), vi("acc")],
        [vi("cond_out", TensorProto.BOOL), vi("acc_out")])
    nodes = [helper.make_node("If", ["cond"], ["branch"], name="/If", then_branch=then_body, else_branch=else_body),
             helper.make_node("Loop", ["n", "cond", "branch"], ["y"], name="/Loop", body=loop_body)]
    return model(nodes, inputs=("cond", "n", "x", "h0"),
                 inits=[weight(k, 4) for k in ("wd", "s", "b", "m", "v")] + GRU_WEIGHTS + [weight("two")])


KB = {"KB001": "mnn-groupnorm-unregistered-custom-op", "KB002": "mnn-grouped-convtranspose-bn-fusion",
      "KB003": "mnn-qdq-input-permutation", "KB004": "ncnn-onnx2ncnn-layernorm",
      "KB005": "mnn-multi-input-gru-quantization"}
POSITIVE = [
    (deconv_bn_buried, [("KB002", "grouped-deconv-bn",
                         ["/decoder/up3/ConvTranspose", "/decoder/up3/bn/BatchNormalization"])]),
    (deconv_scale_with_constant_nodes, [("KB002", "grouped-deconv-scale", ["deconv_2", "scale_mul", "scale_add"])]),
    (custom_op_into_groupnorm, [("KB001", "custom-op-into-groupnorm",
                                 ["/mix/ChannelShuffleX", "/norm1/Reshape", "/norm1/InstanceNormalization"])]),
    (custom_op_into_groupnormalization, [("KB001", "custom-op-into-groupnormalization",
                                          ["/up/FancyUpsample", "/gn/GroupNormalization"])]),
    (qdq_input_per_channel, [("KB003", "qdq-model-input-into-conv",
                              ["images_QuantizeLinear", "images_DequantizeLinear", "/model.0/conv/Conv"])]),
    (gru_state_input_opset7, [("KB005", "gru-with-state-input", ["encoder.rnn"])]),
    (layernorm_in_transformer_block, [("KB004", "layernormalization-op", ["/blocks.3/norm2/LayerNormalization"])]),
    (hand_layernorm_with_constant_exponent, [("KB004", "pow-of-difference", ["/neck/ln/Sub", "/neck/ln/Pow"])]),
    (patterns_inside_if_and_loop, [("KB002", "grouped-deconv-bn", ["/then/ConvTranspose", "/then/BatchNormalization"]),
                                   ("KB004", "pow-of-difference", ["/loop/Sub", "/loop/Pow"]),
                                   ("KB005", "gru-with-state-input", ["/else/GRU"])]),
]


@pytest.mark.parametrize("build, expected", POSITIVE, ids=[b.__name__ for b, _ in POSITIVE])
def test_known_patterns_are_found_however_they_look(build, expected, scan):
    code, rows = scan(build())
    assert code == codes.FOUND
    got = sorted((r["id"], r["pattern"], r["nodes"]) for r in rows)
    assert got == sorted(expected)
    for r in rows:
        assert r["entry"] == KB[r["id"]]
        assert r["url"] == f"http://127.0.0.1:8000/{r['entry']}/"
        assert r["workarounds"] and r["status"]


def test_subgraph_matches_say_where(scan):
    _, rows = scan(patterns_inside_if_and_loop())
    assert {(r["id"], r["graph"], r["subgraph"]) for r in rows} == {
        ("KB002", "then_body", True), ("KB004", "loop_body", True), ("KB005", "else_body", True)}


def test_clean_text_output_says_so(tmp_path, capsys):
    path = tmp_path / "net.onnx"
    onnx.save(plain_convnet(), str(path))
    assert scan_command(str(path), [], False) == codes.NOTHING_FOUND
    assert "no known problem found" in capsys.readouterr().out


def test_site_url_comes_from_the_environment(scan, monkeypatch):
    monkeypatch.setenv("KB_SITE_URL", "https://kb.example.org/docs")
    _, rows = scan(gru_state_input_opset7())
    assert rows[0]["url"] == "https://kb.example.org/docs/mnn-multi-input-gru-quantization/"


def test_many_matches_are_listed_once_each(scan):
    nodes = [n for i in range(30) for n in
             (node("ConvTranspose", [f"x{i}", "wd"], f"u{i}", f"/up{i}/ConvTranspose", group=2),
              node("BatchNormalization", [f"u{i}", "s", "b", "m", "v"], f"y{i}", f"/up{i}/BatchNormalization"))]
    m = model(nodes, inputs=[f"x{i}" for i in range(30)], inits=[weight(k, 4) for k in ("wd", "s", "b", "m", "v")])
    _, rows = scan(m)
    assert len(rows) == 30 and len({tuple(r["nodes"]) for r in rows}) == 30


# ---- status for the engine versions asked about ----------------------------------------------

def accepted(folder, check, **verdicts):
    """Replace the entry's expected.yaml: `check` accepted with these verdicts per version."""
    rows = {v[1:].replace("_", "."): {"verdict": verdict, "observed": "2026-11-21", "platform": "test", "record": "r"}
            for v, verdict in verdicts.items()}
    (folder / "expected.yaml").write_text(yaml.safe_dump({check: rows}))


@pytest.fixture
def deconv_entry(copy_entry):
    folder = copy_entry("mnn-grouped-convtranspose-bn-fusion")
    accepted(folder, "grouped-bn", v3_0_0="reproduces", v3_6_1="fixed")
    return folder


def status_of(rows, entry_id):
    return {(s["engine"], s["version"]): s for s in next(r for r in rows if r["id"] == entry_id)["status"]}


def test_status_defaults_to_the_newest_version(deconv_entry, scan):
    _, rows = scan(deconv_bn_buried())
    assert list(status_of(rows, "KB002")) == [("mnn", "3.6.1")]
    assert status_of(rows, "KB002")[("mnn", "3.6.1")]["status"] == "fixed"


def test_status_on_a_named_version(deconv_entry, scan):
    _, rows = scan(deconv_bn_buried(), "mnn==3.0.0")
    st = status_of(rows, "KB002")[("mnn", "3.0.0")]
    assert st["status"] == "reproduces" and st["checks"] == {"grouped-bn": "reproduces"}


def test_status_on_a_version_never_checked_names_the_nearest(deconv_entry, scan):
    _, rows = scan(deconv_bn_buried(), "mnn==3.2.0")
    st = status_of(rows, "KB002")[("mnn", "3.2.0")]
    assert st["status"] == "not-checked"
    assert st["detail"].endswith("nearest checked: 3.0.0 reproduces, 3.6.1 fixed")


def test_status_for_an_engine_the_problem_does_not_concern(deconv_entry, scan):
    _, rows = scan(deconv_bn_buried(), "ncnn==1.0.20261020", "mnn")
    st = status_of(rows, "KB002")
    assert st[("ncnn", "1.0.20261020")]["status"] == "not-concerned"
    assert st[("mnn", "3.6.1")]["status"] == "fixed"  # a bare engine name: its newest version


def test_status_comes_from_records_too(deconv_entry, scan, monkeypatch, corpus):
    from datetime import datetime, timezone

    from kb.records import Record, RecordStore

    monkeypatch.setenv("KB_RECORDS", str(corpus / "records"))
    RecordStore().append(Record(
        id=Record.new_id(), entry="mnn-grouped-convtranspose-bn-fusion", check="grouped-bn", kind="bug",
        engine="mnn", engine_version="3.7.0", verdict="reproduces", signature="drift", detail="drift again",
        versions={}, platform="test", started=datetime.now(timezone.utc), duration=1.0))
    _, rows = scan(deconv_bn_buried())
    assert status_of(rows, "KB002")[("mnn", "3.7.0")]["status"] == "reproduces"


def test_text_output_names_entry_nodes_status_page_and_workaround(deconv_entry, tmp_path, capsys):
    path = tmp_path / "decoder.onnx"
    onnx.save(deconv_bn_buried(), str(path))
    assert scan_command(str(path), [], False) == codes.FOUND
    out = capsys.readouterr().out
    assert "KB002  Grouped ConvTranspose followed by BatchNorm" in out
    assert "deconv=/decoder/up3/ConvTranspose, bn=/decoder/up3/bn/BatchNormalization" in out
    assert "status: mnn 3.6.1: fixed" in out
    assert "page: http://127.0.0.1:8000/mnn-grouped-convtranspose-bn-fusion/" in out
    assert "workaround (upgrade):" in out


@pytest.mark.parametrize("spec", ["tensorrt==8.6", "mnn>=3.0", "==3.6.1", "mnn==3.6.1==2"])
def test_bad_engine_option(spec, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(plain_convnet(), str(path))
    with pytest.raises(KBError) as e:
        scan_command(str(path), [spec], False)
    assert e.value.code == codes.BAD_ENGINE and "--engine" in str(e.value)


# ---- models exported from torch (dynamo=False), and torch files ------------------------------

torch = pytest.importorskip("torch")


class Decoder(torch.nn.Module):
    """Not the reproducer: other channels and groups, the deconv between other layers."""

    def __init__(self, groups):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.up = torch.nn.ConvTranspose2d(6, 12, 4, stride=2, padding=1, groups=groups)
        self.bn = torch.nn.BatchNorm2d(12)
        self.out = torch.nn.Conv2d(12, 2, 1)

    def forward(self, x):
        return self.out(torch.relu(self.bn(self.up(torch.relu(self.stem(x))))))


def torch_export(module, path, opset=13):
    torch.onnx.export(module.eval(), (torch.randn(1, 3, 8, 8),), str(path), dynamo=False, opset_version=opset,
                      input_names=["image"], output_names=["mask"])
    return path


def test_torch_exported_positive(tmp_path, capsys):
    path = torch_export(Decoder(groups=3), tmp_path / "decoder.onnx", opset=17)
    assert scan_command(str(path), [], True) == codes.FOUND
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["id"], row["pattern"]) == ("KB002", "grouped-deconv-bn")
    assert row["roles"] == {"deconv": "/up/ConvTranspose", "bn": "/bn/BatchNormalization"}


def test_torch_exported_clean(tmp_path, capsys):
    path = torch_export(Decoder(groups=1), tmp_path / "decoder.onnx")
    assert scan_command(str(path), [], True) == codes.NOTHING_FOUND
    assert json.loads(capsys.readouterr().out) == []


def test_torch_export_program_is_exported_then_scanned(tmp_path, capsys):
    """A torch.export program goes through the ONNX exporter's defaults, which fold the BN away:
    the user's own ONNX export of that program would not show KB002 either."""
    class Gated(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = torch.nn.LayerNorm(8)

        def forward(self, x):
            return self.ln(x)

    path = tmp_path / "gated.pt2"
    torch.export.save(torch.export.export(Gated().eval(), (torch.randn(2, 8),)), str(path))
    assert scan_command(str(path), [], True) == codes.FOUND
    out = capsys.readouterr()
    assert [r["pattern"] for r in json.loads(out.out)] == ["layernormalization-op"]
    assert "torch.export program" in out.err


@pytest.mark.parametrize("kind", ["torchscript", "checkpoint"])
def test_torch_files_that_cannot_be_scanned(kind, tmp_path):
    path = tmp_path / "model.pt"
    if kind == "torchscript":
        torch.jit.trace(Decoder(2).eval(), torch.randn(1, 3, 8, 8)).save(str(path))
    else:
        torch.save(Decoder(2).state_dict(), str(path))
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

def synthetic(n):
    import importlib.util

    spec = importlib.util.spec_from_file_location("scan_speed", ROOT / "bench" / "scan_speed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.synthetic(n)


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
    large, _ = timed(80_000)
    assert large < 24 * max(small, 0.02)  # 8x the nodes: about 8x the time (noise allowed), not 64x


# ---- through the command line, once `kb scan` is wired into kb.cli ----------------------------

def wired(command):
    from kb.cli import app

    return command in {c.name or c.callback.__name__ for c in app.registered_commands}


needs_cli = pytest.mark.skipif(not wired("scan"), reason="`kb scan` is not wired into kb/cli.py yet")


def kb(*args):
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True, cwd=ROOT)


@needs_cli
def test_cli_scan_json_and_exit_code(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(gru_state_input_opset7(), str(path))
    p = kb("scan", str(path), "--engine", "mnn==3.6.1", "--json")
    assert p.returncode == codes.FOUND, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["entry"] == "mnn-multi-input-gru-quantization" and row["nodes"] == ["encoder.rnn"]
    clean = tmp_path / "clean.onnx"
    onnx.save(plain_convnet(), str(clean))
    assert kb("scan", str(clean)).returncode == codes.NOTHING_FOUND


@needs_cli
@pytest.mark.parametrize("case", ["missing", "directory", "truncated", "text", "empty"])
def test_cli_bad_input_is_one_line(case, tmp_path):
    path, code = bad_inputs(tmp_path)[case]
    p = kb("scan", str(path))
    assert p.returncode == code
    assert len(p.stderr.strip().splitlines()) == 1 and path.name in p.stderr
    assert "Traceback" not in p.stderr
