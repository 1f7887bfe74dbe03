"""Prometheus metrics (a leaf package: it imports nothing else from ``scheduler``).

``registry`` holds the one ``Metrics`` class that owns every collector, ``labels`` the
closed label-value sets. Import the modules: ``from scheduler.metrics.registry import
Metrics``.
"""
