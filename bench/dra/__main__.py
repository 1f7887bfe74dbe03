"""``python -m bench.dra``: see :mod:`bench.dra.cli`."""

from bench.dra.cli import main

raise SystemExit(main())
