"""``python -m server`` runs the ``margin`` command."""

from server.cli import main

raise SystemExit(main())
