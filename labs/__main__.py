"""python -m labs: the lab kit's command line."""

from labs.commands.cli import main

raise SystemExit(main())
