"""``python -m server.worker``: the measurement worker (see :mod:`server.worker.main`)."""

import sys

from server.worker.main import main

sys.exit(main())
