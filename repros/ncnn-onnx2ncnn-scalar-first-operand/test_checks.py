from kb.checks import Checks

checks = Checks(__file__)
# ncnn's x86 InnerProduct keeps fp16 weights where the CPU has F16C, and pnnx stores fp16 weights: a correct
# result differs from torch by up to 7.6e-4 (measured: onnx2ncnn opset-17 MLP, SiLU variant; pnnx up to 1.7e-4).
TOL = dict(atol=1e-3, rtol=1e-3)


def scalar_operand_second(src, dst):
    """The graph edit of the `fix-graph` workaround (as the page shows it): a 0-d constant first operand of a
    commutative Add / Mul / Max / Min moves to the second place; Pow's gets the shape [1]."""
    import onnx

    model = onnx.load(str(src))
    consts = {t.name: t for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant":
            consts.update({n.output[0]: a.t for a in n.attribute if a.name == "value"})
    for n in model.graph.node:
        t = consts.get(n.input[0]) if n.op_type in ("Add", "Mul", "Max", "Min", "Pow") and n.input else None
        if t is None or len(t.dims) != 0:
            continue
        if n.op_type == "Pow":
            t.dims.append(1)
        else:
            n.input[0], n.input[1] = n.input[1], n.input[0]
    onnx.save(model, str(dst))
    return dst


def via_onnx2ncnn(s, case, model=None):
    param, bin = s.onnx2ncnn.convert(model or s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.workaround("onnx2ncnn", "fix-graph", needs=["ncnn"], **TOL)
def onnx2ncnn_mlp_fixed_graph(s):
    """The dynamo=True opset-18 file with its scalar operands moved second."""
    fixed = scalar_operand_second(s.artifacts.onnx("mlp-gelu-dynamo"), s.path("mlp-gelu-dynamo-fixed.onnx"))
    return via_onnx2ncnn(s, "mlp-gelu-dynamo", fixed)


@checks.workaround("onnx2ncnn", "fix-graph", needs=["ncnn"], **TOL)
def onnx2ncnn_scale_first_fixed_graph(s):
    fixed = scalar_operand_second(s.artifacts.onnx("scale-first-torchscript"),
                                  s.path("scale-first-torchscript-fixed.onnx"))
    return via_onnx2ncnn(s, "scale-first-torchscript", fixed)
