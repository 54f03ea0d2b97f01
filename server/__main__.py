"""``python -m server`` runs the ``margin`` command."""

from server.launch import main

raise SystemExit(main())
