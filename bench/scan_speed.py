"""Time of `kb scan`'s matching (all entries' trigger patterns) on synthetic ONNX graphs of 1k, 10k
and 100k nodes, excluding file loading. Matching must be linear in graph size; target: 10k nodes
well under a second.

The graph repeats a 12-node block full of near misses of the corpus's patterns (a grouped
ConvTranspose into Relu, x - mean squared by Mul, a standard op into Reshape -> InstanceNormalization,
Q -> DQ -> Conv on an activation), and every 83rd block squares with Pow instead: one true match.
"""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = 12


def synthetic(nodes: int):
    """A model of about `nodes` nodes, built in memory."""
    from onnx import TensorProto, helper

    inits = [helper.make_tensor(n, TensorProto.FLOAT, [1], [1.0])
             for n in ("W", "B", "s", "b", "m", "v", "Wd", "two", "scale")]
    inits.append(helper.make_tensor("shape", TensorProto.INT64, [1], [-1]))
    inits.append(helper.make_tensor("zp", TensorProto.UINT8, [], [0]))
    out, prev = [], "x"
    for k in range(max(1, nodes // BLOCK)):
        t = [f"b{k}_t{i}" for i in range(BLOCK + 1)]
        t[0] = prev
        square = ("Pow", [t[7], "two"]) if k % 83 == 82 else ("Mul", [t[7], t[7]])
        specs = [
            ("Conv", [t[0], "W", "B"], {}),
            ("BatchNormalization", [t[1], "s", "b", "m", "v"], {}),
            ("Relu", [t[2]], {}),
            ("ConvTranspose", [t[3], "Wd"], {"group": 2}),
            ("Relu", [t[4]], {}),
            ("ReduceMean", [t[5]], {"axes": [1]}),
            ("Sub", [t[5], t[6]], {}),
            (square[0], square[1], {}),
            ("Reshape", [t[8], "shape"], {}),
            ("InstanceNormalization", [t[9], "s", "b"], {}),
            ("QuantizeLinear", [t[10], "scale", "zp"], {}),
            ("DequantizeLinear", [t[11], "scale", "zp"], {}),
        ]
        for i, (op, ins, attrs) in enumerate(specs):
            out.append(helper.make_node(op, ins, [t[i + 1]], name=f"/block{k}/{op}_{i}", **attrs))
        prev = t[BLOCK]
    graph = helper.make_graph(out, "synthetic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    sys.path.insert(0, str(ROOT))
    from kb.entries import load_all
    from kb.match.scan import find_problems

    entries = load_all(ROOT)
    patterns = sum(len(e.meta.trigger) for e in entries)
    print(f"{len(entries)} entries, {patterns} trigger patterns")
    print(f"{'nodes':>8} {'scan s':>8} {'us/node':>8} {'matches':>8}")
    for n in (1_000, 10_000, 100_000):
        model = synthetic(n)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            scanned = find_problems(entries, model)
            best = min(best, time.perf_counter() - start)
        print(f"{scanned.nodes:>8} {best:>8.3f} {best / scanned.nodes * 1e6:>8.1f} {len(scanned.found):>8}")


if __name__ == "__main__":
    main()
