"""python -m agio.bench --help lists the options; docs/PYTHON.md#benchmarks says what each
experiment measures."""

import sys

from .harness import main

sys.exit(main())
