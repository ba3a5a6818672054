"""W3 — a tiled matmul as a ``GridRegionExpr``: loop overhead per iteration.

``C = A @ B`` with M = N = 128 and K = 2048, accumulated over K in tiles of 32: 64
iterations, each slicing a ``128×32`` panel of A and a ``32×128`` panel of B at a start
computed from the induction variable (``dim_mul(k, 32)``), multiplying them and adding the
product to the carried accumulator. Executors, timed side by side in the same rounds:

* ``eager (Python loop)`` — the baseline: a Python loop over the tiles (the straight-line
  program of a loop), making exactly the routes' torch calls and nothing else: one
  ``torch.full`` for the accumulator, then per tile the start ``k * 32``, two slices
  (``t[start:stop:1]`` on both axes, as the ``slice`` rule indexes), a ``matmul`` and an ``add``;
* ``fx GraphModule`` / ``fx Interpreter`` — ``torch.fx.symbolic_trace`` of that function.
  Tracing runs the Python loop, so fx's graph is the loop **unrolled**: 64 × (two slices,
  ``matmul``, ``add``), every start a constant; the zero accumulator (``torch.full`` of
  constants) is made once at trace time and kept as a constant tensor;
* ``onnx ReferenceEvaluator`` — when ``onnx`` is installed: an ONNX model whose ``Loop`` node
  (trip count 64, carrying the accumulator from ``ConstantOfShape``) has a body that computes
  the start ``i * 32``, ``Slice``s both panels, ``MatMul``s and ``Add``s — not unrolled;
* ``tfexec evaluate`` and ``run check=off|boundary|full``.

Every result is bitwise eager's, except ONNX's (numpy's ``matmul`` sums in another order),
which must be within ``ONNX_RTOL``/``ONNX_ATOL``. After the table, a line gives issue #19's
targets: ``run`` (check off) ≤ 1.20× and ``evaluate`` ≤ 1.8× eager.

Run: ``.venv/bin/python bench/w3_tiled.py [--quick] [--rounds R]``.
"""

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.fx

import tfexec
from tfexec import Function, GridRegionExpr, Var, f32, i64, ops

import harness
import onnx_peer

if TYPE_CHECKING:  # onnx is optional: imported where a model is built, only when installed
    import onnx


@dataclass(frozen=True, slots=True)
class Sizes:
    m: int
    n: int
    k: int
    tile: int

    @property
    def iterations(self) -> int:
        return self.k // self.tile


FULL = Sizes(m=128, n=128, k=2048, tile=32)
QUICK = Sizes(m=16, n=16, k=128, tile=32)
BASELINE = "eager (Python loop)"
# ONNX's result against eager: |onnx - eager| <= ONNX_ATOL + ONNX_RTOL * |eager| everywhere.
# numpy's matmul (its BLAS) may sum each panel product in another order than torch's (on the
# machine these were set on it came out bitwise equal); the entries of C reach ~200 in size.
ONNX_RTOL = 1e-4
ONNX_ATOL = 1e-4
TARGETS = (harness.Target("run check=off", BASELINE, 1.20), harness.Target("tfexec evaluate", BASELINE, 1.8))


def eager_fn(s: Sizes) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The eager loop: the same ``full``, slices, matmuls and adds as the HIR's value rules
    (sizes bound to locals first, so the loop reads no attributes the routes do not)."""
    m, n, tile, iterations = s.m, s.n, s.tile, s.iterations

    def tiled(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        acc = torch.full((m, n), 0.0, dtype=torch.float32)
        for k in range(iterations):
            t = k * tile
            pa = a[0:m:1, t : t + tile : 1]
            pb = b[t : t + tile : 1, 0:n:1]
            acc = torch.add(acc, torch.matmul(pa, pb))
        return acc

    return tiled


def hir(s: Sizes) -> Function:
    """The tiled matmul as a ``GridRegionExpr`` carrying the accumulator."""
    a, b = Var("a", f32[s.m, s.k]), Var("b", f32[s.k, s.n])
    k, acc = Var("k", i64[()]), Var("acc", f32[s.m, s.n])
    t = ops.dim_mul(k, s.tile)
    pa = ops.slice(a, (0, t), sizes=(s.m, s.tile))
    pb = ops.slice(b, (t, 0), sizes=(s.tile, s.n))
    step = ops.add(acc, ops.matmul(pa, pb))
    init = ops.full(shape=(s.m, s.n), value=0.0, dtype=f32)
    return Function("tiled_matmul", (a, b), GridRegionExpr(s.iterations, k, (init,), (acc,), step, (step,)))


def onnx_model(s: Sizes) -> "onnx.ModelProto":
    """The tiled matmul as an ONNX model: ``ConstantOfShape`` makes the zero accumulator, a ``Loop``
    of ``s.iterations`` trips carries it; the body computes ``t = i * tile`` (as a 1-element
    tensor), ``Slice``s ``a[:, t:t+tile]`` and ``b[t:t+tile, :]``, ``MatMul``s and ``Add``s. The
    body reads ``a``, ``b`` and its constants from the outer graph, as ONNX allows."""
    import numpy as np  # with onnx only
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, value: int | bool | list[int], dtype: "type[np.generic]") -> "onnx.TensorProto":
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)

    body = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["i", "axis0"], ["i_1d"]),
            helper.make_node("Mul", ["i_1d", "tile"], ["start"]),
            helper.make_node("Add", ["start", "tile"], ["stop"]),
            helper.make_node("Slice", ["a", "start", "stop", "axis1"], ["pa"]),
            helper.make_node("Slice", ["b", "start", "stop", "axis0"], ["pb"]),
            helper.make_node("MatMul", ["pa", "pb"], ["product"]),
            helper.make_node("Add", ["acc_in", "product"], ["acc_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "tile_step",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [s.m, s.n]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [s.m, s.n]),
        ],
    )
    zero = numpy_helper.from_array(np.array([0.0], dtype=np.float32))
    graph = helper.make_graph(
        [
            helper.make_node("ConstantOfShape", ["acc_shape"], ["acc0"], value=zero),
            # An explicit true condition: the reference evaluator's Loop never runs with the
            # condition left empty (``""``), though the ONNX spec reads that as true.
            helper.make_node("Loop", ["trips", "true", "acc0"], ["c"], body=body),
        ],
        "w3",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [s.m, s.k]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [s.k, s.n]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [s.m, s.n])],
        initializer=[
            const("acc_shape", [s.m, s.n], np.int64), const("trips", s.iterations, np.int64),
            const("true", True, np.bool_), const("tile", [s.tile], np.int64),
            const("axis0", [0], np.int64), const("axis1", [1], np.int64),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_peer.OPSET)])


def executors(s: Sizes, seed: int) -> tuple[list[harness.Executor], str]:
    """Every executor, checked against the baseline, and the line about ONNX (its tolerance,
    or why its row is absent)."""
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(s.m, s.k, generator=g), torch.randn(s.k, s.n, generator=g)
    eager = eager_fn(s)
    gm = torch.fx.symbolic_trace(eager)
    interp = torch.fx.Interpreter(gm)
    fn = hir(s)
    graph = tfexec.lower(fn)
    ex = [
        harness.Executor(BASELINE, lambda: eager(a, b)),
        harness.Executor("fx GraphModule", lambda: gm(a, b)),
        harness.Executor("fx Interpreter", lambda: interp.run(a, b)),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(fn, a, b)),
        harness.Executor("run check=off", lambda: graph.run(a, b, check="off")),
        harness.Executor("run check=boundary", lambda: graph.run(a, b, check="boundary")),
        harness.Executor("run check=full", lambda: graph.run(a, b, check="full")),
    ]
    harness.same([(e.name, e.call()) for e in ex])
    note = onnx_peer.ABSENT
    if onnx_peer.available():
        peer, note = onnx_peer.executor(
            onnx_model(s), {"a": a, "b": b}, eager(a, b), ref_name=BASELINE, rtol=ONNX_RTOL, atol=ONNX_ATOL
        )
        ex.insert(3, peer)  # after the fx rows: the Python peers side by side
    return ex, note


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=21)
    args = p.parse_args(argv)
    with harness.torch_settings():
        s = QUICK if args.quick else FULL
        ex, onnx_note = executors(s, args.seed)
        timings = harness.measure(
            ex, rounds=harness.rounds_of(args), baseline=BASELINE, seed=args.seed, block_s=0.005 if args.quick else 0.05
        )
        print(
            f"W3 tiled matmul: M={s.m} N={s.n} K={s.k}, tile {s.tile} ({s.iterations} iterations); "
            f"{harness.rounds_of(args)} shuffled rounds"
        )
        print(harness.machine_line())
        print(harness.ratio_table(timings, nodes=s.iterations, unit="iter", baseline=BASELINE))
        print(onnx_note)
        print(harness.targets_line(timings, TARGETS, quick=args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
