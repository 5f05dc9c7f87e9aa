"""python -m labs: the lab kit's command line."""

from labs.term.cli import main

raise SystemExit(main())
