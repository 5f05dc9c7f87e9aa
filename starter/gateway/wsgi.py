"""The gateway as a WSGI application for a production server.

    DATABASE_URL=postgresql://... gunicorn -c deploy/gunicorn.conf.py <tree>.gateway.wsgi:app

always behind nginx (deploy/nginx/), which reads each request whole, so that
clients sending slowly cannot hold gunicorn's threads (README.md, "In production").

Each server process imports this module on its own and so builds its own store
(its own connection pool): processes share nothing but the database.
"""

from __future__ import annotations

from ..infra import make_store
from .app import create_app

app = create_app(make_store())
