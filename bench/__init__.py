"""The benchmarks and differential harnesses: how fast, and how faithful to kube-scheduler.

Not shipped (the wheel holds ``scheduler`` only); each command is ``python -m bench.<name>``
and says in its docstring what it measures, how, and which modules it uses. Figures and
method: docs/performance.md (speed) and docs/fidelity.md (decisions against kube).
"""
