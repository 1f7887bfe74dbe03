"""``python -m bench.chaos``: see :mod:`bench.chaos.cli`."""

from bench.chaos.cli import main

raise SystemExit(main())
