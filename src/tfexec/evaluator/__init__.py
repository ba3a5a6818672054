"""The direct route: the evaluator spec's ``evaluate`` and ``EvaluatorVisitor``."""
