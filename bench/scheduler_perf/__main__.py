"""``python -m bench.scheduler_perf``: see :mod:`bench.scheduler_perf.cli`."""

from bench.scheduler_perf.cli import main

raise SystemExit(main())
