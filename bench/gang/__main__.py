"""``python -m bench.gang``: see :mod:`bench.gang.cli`."""

from bench.gang.cli import main

raise SystemExit(main())
