"""What both evaluation routes share, each rule written once.

* ``values`` — ``Value``, ``TensorValue``, ``TupleValue`` (evaluator spec §1);
* ``context`` — ``EvaluateContext`` (spec §3);
* ``registry`` — ``eval_registry``, ``register_eval``, value rules, ``Kernel``, ``Arg``;
* ``dispatch`` — one op call site's plan: refusals, weak scalars, kernel, result layout;
* ``rules/`` — the value rules of the op catalogue, one module per op group;
* ``binding`` — inputs to parameters, arguments to a callee, a result to its declared type;
* ``constants`` — constants, module weights and index values a run makes;
* ``loops`` — trip counts; ``liveness`` — last readers; ``layouts`` — which layout a
  value carries, and layout-domain views;
* ``keys`` — node keys; ``messages`` — the errors both routes raise; ``targets`` — what
  a run evaluates.
"""
