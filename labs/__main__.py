"""python -m labs: the lab kit's command line."""

from labs.cli import main

raise SystemExit(main())
