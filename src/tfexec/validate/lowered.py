"""The lowered graph's denotation, from its public structure alone.

What each node computes is read off its kind (``tfexec.forward.kinds``) and its declared
reads, as the run loop (``Body.execute``) hands them over: an ``OpApply`` is its plan's
kernel applied to its fills (weak scalars, then the read values in order), a
``HandlerCall`` its plan's handler on the operand shapes over its reads, ``MakeConstant``
and ``ReadWeight`` their constant and weight, an ``EnterCall`` the tuple of its arguments
(and the callee's dim scope it opens), a ``RunLoop`` the recursion of its nested body over
the frontier values, the index and the carries, and a ``Fail`` its error. A node sees the
dim scope its ``scope`` names as the last boundary opening it left it. Nothing here looks
at how ``lower`` built the graph: only at ``graph.nodes`` (and nested bodies), the kinds'
public fields, ``Body.outputs``/``Body.keyed`` and ``graph.function.params``.

Structure that makes no sense (a read of a field a value does not have, fills that do not
use the reads, a loop body taking other inputs than its loop passes) is recorded as a
problem and denoted by a ``malformed`` term, so it never compares equal to the program.
"""

from collections.abc import Sequence

from tfexec.forward.graph import ForwardGraph
from tfexec.forward import kinds
from tfexec.forward.kinds import EnterCall, Fail, HandlerCall, MakeConstant, OpApply, ReadWeight, RunLoop, Shape
from tfexec.forward.node import ForwardNode, Read
from tfexec.forward.run import Body, Ref, Step
from tfexec.ir.describe import describe_expr
from tfexec.ir.weak import Weak
from tfexec.semantics.dispatch import CallPlan, Fill
from tfexec.semantics.registry import eval_registry
from tfexec.semantics.keys import iteration_prefix, template
from tfexec.semantics.values import may_hold_index
from tfexec.validate import heads
from tfexec.validate.report import Problem
from tfexec.validate.runtime import entered, expected_operands, handed, mismatch, recorded, symbolic
from tfexec.validate.terms import Den, Denotation, Terms, leaves, project


class GraphDenotation:
    """``denote()`` walks the graph's node lists once, in order; ``problems`` are the
    structural ones met on the way; ``nodes`` counts the nodes walked (bodies included)."""

    def __init__(self, terms: Terms, graph: ForwardGraph) -> None:
        self.terms = terms
        self.graph = graph
        self.out = Denotation()
        self.problems: list[Problem] = []
        self.nodes = 0
        self.scopes: dict[int, int] = {0: heads.entry_scope(terms)}
        self.undo: list[tuple[int, int | None]] = []

    def denote(self) -> Denotation:
        graph, terms = self.graph, self.terms
        params = graph.function.params
        if graph.n_inputs != len(params):
            self.problem("reads", graph.function.name, f"the graph has {graph.n_inputs} input slot(s) for {len(params)} parameter(s)")
        slots: list[Den] = [heads.parameter(terms, i, p.type) for i, p in enumerate(params)]
        slots.extend(heads.malformed(terms, f"input {i}") for i in range(len(params), graph.n_inputs))
        self.out.table = self.body(graph.body, slots, "", graph.function.name, 0)
        self.out.outputs = self.ref(graph.body.outputs, slots, f"the outputs of {graph.function.name}")
        return self.out

    def problem(self, rule: str, where: str, reason: str, node: ForwardNode | None = None) -> None:
        description = describe_expr(node.source) if node is not None else where
        self.problems.append(Problem(rule, where, description, reason))

    def body(
        self, body: Body, slots: list[Den], prefix: str, label: str, level: int, hosts: list[bool] | None = None,
    ) -> list[tuple[str, Den]]:
        """Denote ``body``'s nodes after its input ``slots`` (``hosts``: which of them may hold a
        host-int index value); its table entries in ``record``'s order."""
        steps = self.out.steps[label] = []
        nested: dict[str, list[tuple[str, Den]]] = {}
        context = [symbolic(d) for d in slots]  # the run context as the run loop sees it, symbolically
        hosts = [False] * len(slots) if hosts is None else hosts
        run_steps = body.steps if len(body.steps) == len(body.nodes) else None  # else: a "frees" problem
        for i, node in enumerate(body.nodes):
            self.nodes += 1
            step = None if run_steps is None else run_steps[i]
            den = self.node(node, slots, steps, nested, prefix, level, body, context, step, hosts)
            slots.append(den)
            context.append(symbolic(den))
            hosts.append(may_be_host_int(node))
        iterations = {k: symbolic(d) for entries in nested.values() for k, d in entries}
        table: list[tuple[str, Den]] = []
        for key, ref in body.keyed:
            full = prefix + key
            table.extend(nested.pop(full, ()))
            table.append((full, self.ref(ref, slots, full)))
        for rest in nested.values():
            table.extend(rest)
        model = tuple((k, symbolic(d)) for k, d in table)
        why = mismatch(model, lambda: recorded(body.keyed, context, prefix, iterations))
        if why is not None:
            self.problem("keys", label, f"record, writing this node list's table, {why}")
        return table

    def label(self, node: ForwardNode, prefix: str, slot: int) -> str:
        return prefix + node.key if node.key else f"slot {slot} ({node.what.describe()} in {prefix or self.graph.function.name})"

    def slot_label(self, body: Body, slot: int, prefix: str) -> str:
        """What slot ``slot`` of ``body`` holds, for a report."""
        n = body.data.n_inputs
        if slot < n:
            return f"input slot {slot} of {prefix or self.graph.function.name}"
        node = body.nodes[slot - n]
        return f"{self.label(node, prefix, slot)}: {describe_expr(node.source)}"

    def read(self, r: Read, slots: Sequence[Den], where: str, node: ForwardNode | None = None) -> Den:
        if not 0 <= r.slot < len(slots):
            self.problem("reads", where, f"reads slot {r.slot}, but only slots 0..{len(slots) - 1} exist before it", node)
            return heads.malformed(self.terms, f"slot {r.slot}")
        den = project(slots[r.slot], r.path)
        if den is None:
            self.problem("reads", where, f"reads {r}, a field slot {r.slot}'s value does not have", node)
            return heads.malformed(self.terms, str(r))
        return den

    def ref(self, ref: Ref, slots: Sequence[Den], where: str) -> Den:
        if isinstance(ref, Read):
            return self.read(ref, slots, where)
        return tuple(self.ref(r, slots, where) for r in ref)

    def dims(self, node: ForwardNode, where: str) -> int:
        """The dim scope term ``node`` computes in."""
        found = self.scopes.get(node.scope)
        if found is not None:
            return found
        if 0 < node.scope < self.graph.scope_count:
            self.problem("scopes", where, f"computes in dim scope {node.scope}, which no call boundary before it opens", node)
            return heads.entry_scope(self.terms)  # what the run hands it: the entry's dims as the inputs bound them
        self.problem("scopes", where, f"computes in dim scope {node.scope}; the graph has {self.graph.scope_count}", node)
        return heads.malformed(self.terms, f"scope {node.scope}")

    def positions(self, s: Shape, reads: Sequence[Den], where: str, node: ForwardNode) -> Den:
        """Where ``s`` places ``reads`` (the model), checked against ``rebuild``, the function
        the node's kind calls to do it."""
        model = self.placed(s, reads, where, node)
        why = mismatch(symbolic(model), lambda: kinds.rebuild(s, [symbolic(r) for r in reads]))
        if why is not None:
            self.problem("reads", where, f"rebuilding its values from its reads {why}", node)
        return model

    def placed(self, s: Shape, reads: Sequence[Den], where: str, node: ForwardNode) -> Den:
        if isinstance(s, int):
            if 0 <= s < len(reads):
                return reads[s]
            self.problem("reads", where, f"places read {s}, but it has {len(reads)} read(s)", node)
            return heads.malformed(self.terms, f"read {s}")
        return tuple(self.placed(x, reads, where, node) for x in s)

    def fills(self, fills: Sequence[Fill], reads: Sequence[Den], where: str, node: ForwardNode) -> list[Den]:
        """The kernel operands ``OpApply.compute`` assembles: weak scalars and the reads in order."""
        it = iter(reads)
        used = [0]

        def fill(f: Fill) -> Den:
            if f is None:
                used[0] += 1
                nxt = next(it, None)
                if nxt is None:
                    self.problem("reads", where, f"its fills take more values than its {len(reads)} read(s)", node)
                    return heads.malformed(self.terms, "missing read")
                return nxt
            if isinstance(f, Weak):
                return heads.scalar(self.terms, f.value)
            return tuple(fill(x) for x in f)

        out = [fill(f) for f in fills]
        if used[0] < len(reads):
            self.problem("reads", where, f"declares {len(reads)} read(s) but its fills place {used[0]}", node)
        return out

    def conversions(self, node: ForwardNode, host_reads: list[bool], where: str) -> None:
        """A node that takes tensors must convert each read that may hold a host-int index value
        (its kind's ``conv``): only a ``host_index`` kernel takes one as it is, and a loop passes
        its frontier through to its body (whose nodes convert) and makes its carries tensors."""
        what: object = node.what
        if isinstance(what, OpApply):
            kernel = what.plan.kernel
            if kernel is None or kernel.host_index:
                return
        elif not isinstance(what, (HandlerCall, EnterCall)):
            return
        conv = getattr(what, "conv", ())
        missing = [p for p, host in enumerate(host_reads) if host and p not in conv]
        if missing:
            self.problem(
                "reads", where,
                f"read(s) {missing} may hold an index value as a host int, which it does not make a tensor "
                f"(its conversions are {list(conv)})", node,
            )

    def current(self, plan: CallPlan, where: str, node: ForwardNode) -> None:
        """A plan must use the registry's entry for its op class as it is now (side condition 2)."""
        if eval_registry.lookup(type(plan.op)) is not plan.rule:
            self.problem(
                "registry", where,
                f"its plan uses a rule for {type(plan.op).__name__} that is no longer the registry's (re-registered "
                "since lowering: lower again)", node,
            )

    def open(self, scope: int, term: int) -> None:
        self.undo.append((scope, self.scopes.get(scope)))
        self.scopes[scope] = term

    def node(
        self, node: ForwardNode, slots: list[Den], steps: list[tuple[int, object]], nested: dict[str, list[tuple[str, Den]]],
        prefix: str, level: int, enclosing: Body, context: Sequence[object], step: Step | None, hosts: list[bool],
    ) -> Den:
        terms = self.terms
        where = self.label(node, prefix, len(slots))
        reads = [self.read(r, slots, where, node) for r in node.reads]
        host_reads = [not r.path and 0 <= r.slot < len(hosts) and hosts[r.slot] for r in node.reads]
        self.conversions(node, host_reads, where)
        what: object = node.what  # a closed union, but a hand-built node may hold anything
        handed_reads = tuple(symbolic(r) for r in reads)
        if step is not None:
            why = mismatch(handed_reads, lambda: handed(step, context))
            if why is not None:
                self.problem("reads", where, f"the run loop's getter for it {why}", node)
        if isinstance(what, OpApply) and what.assemble is not None and isinstance(what.fills, tuple):
            assemble = what.assemble
            why = mismatch(expected_operands(what.fills, handed_reads), lambda: assemble(handed_reads))
            if why is not None:
                self.problem("reads", where, f"its operand assembler {why}", node)
        if isinstance(what, OpApply):
            plan, kernel = what.plan, what.plan.kernel
            self.current(plan, where, node)
            if kernel is None:
                self.problem("reads", where, "an op node whose plan has no kernel", node)
                return heads.malformed(terms, "no kernel")
            operands = list(reads) if what.plain else self.fills(what.fills, reads, where, node)
            term = heads.apply_op(terms, plan.op, plan.args, operands, self.dims(node, where) if kernel.needs_ctx else None)
            steps.append((term, node.source))
            return term
        if isinstance(what, HandlerCall):
            plan = what.plan
            self.current(plan, where, node)
            values = [self.positions(s, reads, where, node) for s in what.operands]
            term, den = heads.apply_handler(
                terms, plan.op, plan.views, plan.operand_layouts, plan.layout, plan.call.checked_type, what.result, values,
                self.dims(node, where),
            )
            steps.append((term, plan.call))
            return den
        if isinstance(what, MakeConstant):
            term = heads.constant(terms, what.constant)
            if not what.constant.weak:
                steps.append((term, what.constant))
            return term
        if isinstance(what, ReadWeight):
            term = heads.weight(terms, what.weight)
            steps.append((term, what.weight))
            return term
        if isinstance(what, EnterCall):
            args = [self.positions(s, reads, where, node) for s in what.args]
            model = ((("scope", what.callee_scope), tuple(symbolic(a) for a in args)), tuple(symbolic(a) for a in args))
            why = mismatch(model, lambda: entered(what, node.scope, handed_reads))
            if why is not None:
                self.problem("reads", where, f"its boundary, run on its reads, {why}", node)
            dims = heads.call_scope(terms, what.callee, what.layouts, args)
            steps.append((dims, what.call))
            if type(what.callee_scope) is int and 0 < what.callee_scope < self.graph.scope_count:
                self.open(what.callee_scope, dims)
            else:  # the run would index its scope table out of range (or reopen the entry's)
                self.problem(
                    "scopes", where,
                    f"opens dim scope {what.callee_scope}; a call boundary opens one of 1..{self.graph.scope_count - 1}",
                    node,
                )
            return tuple(args)
        if isinstance(what, RunLoop):
            return self.loop(node, what, reads, steps, nested, prefix, level, where, enclosing, host_reads)
        if isinstance(what, Fail):
            term = heads.failure(terms, what.error)
            steps.append((term, None))
            return term
        self.problem("reads", where, f"a node of unknown kind {type(what).__name__}", node)  # pragma: no cover
        return heads.malformed(terms, type(what).__name__)

    def loop(
        self, node: ForwardNode, what: RunLoop, reads: list[Den], steps: list[tuple[int, object]],
        nested: dict[str, list[tuple[str, Den]]], prefix: str, level: int, where: str, enclosing: Body,
        host_reads: list[bool],
    ) -> Den:
        terms = self.terms
        front, carries = reads[: what.n_front], reads[what.n_front :]
        inner = level + 1
        body_slots: list[Den] = [*front, heads.bound(terms, inner, heads.INDEX)]
        body_slots.extend(heads.bound(terms, inner, m) for m in range(len(carries)))
        body = what.body
        if body.data.n_inputs != len(body_slots):
            self.problem(
                "reads", where,
                f"its body takes {body.data.n_inputs} input(s), the loop passes {len(body_slots)} "
                f"({len(front)} frontier value(s), the index, {len(carries)} carr(ies))", node,
            )
            while len(body_slots) < body.data.n_inputs:
                body_slots.append(heads.malformed(terms, "missing body input"))
            del body_slots[body.data.n_inputs :]
        key = prefix + what.key
        mark = len(self.undo)
        # in the body: the frontier values as passed (an index stays a host int), the index (a
        # host int), the carries (made tensors by RunLoop.compute)
        body_hosts = [*host_reads[: len(front)], True, *([False] * (len(body_slots) - len(front) - 1))]
        entries = self.body(body, body_slots, template(iteration_prefix(key, 0)), key, inner, body_hosts)
        while len(self.undo) > mark:  # a scope a body opens is the body's
            scope, old = self.undo.pop()
            if old is None:
                del self.scopes[scope]
            else:
                self.scopes[scope] = old
        nested.setdefault(key, []).extend(entries)
        roots = leaves(self.ref(body.outputs, body_slots, f"the outputs of the body of {key}"))
        body_context = [symbolic(d) for d in body_slots]
        why = mismatch(tuple(symbolic(r) for r in roots), lambda: what.outputs(body_context))
        if why is not None:
            self.problem("reads", where, f"its getter of an iteration's outputs {why}", node)
        region = what.region
        inits = [t for c in carries for t in leaves(c)]
        carried = bool(region.carried_args)
        symbolic_extent = not isinstance(region.extent, int)
        term = heads.loop(terms, region.extent, carried, self.dims(node, where) if symbolic_extent else None, inits, roots)
        steps.append((term, region))
        frontier: list[tuple[int, str]] = []
        for r, f in zip(node.reads, front):
            label = self.slot_label(enclosing, r.slot, prefix)
            frontier.extend((t, label) for t in leaves(f) if not heads.is_weak_constant(terms, t))
        self.out.frontiers[key] = frontier
        outs = [heads.loop_out(terms, term, m) for m in range(len(carries) if carried else len(roots))]
        return self.positions(what.result, outs, where, node)


def may_be_host_int(node: ForwardNode) -> bool:
    """Whether ``node``'s slot may hold a host-int index value: only an ``OpApply`` of a
    ``host_index`` kernel typed ``i64[()]`` returns one (core-ir §2; Lemma 15)."""
    what: object = node.what
    if not isinstance(what, OpApply):
        return False
    kernel = what.plan.kernel
    return kernel is not None and kernel.host_index and may_hold_index(node.type)


def denote_graph(terms: Terms, graph: ForwardGraph) -> tuple[Denotation, list[Problem], int]:
    """``graph``'s denotation, the structural problems met, and how many nodes were walked."""
    walk = GraphDenotation(terms, graph)
    return walk.denote(), walk.problems, walk.nodes


__all__ = ["denote_graph"]
