"""The lab's Alembic environment (env.py, script.py.mako), shipped with the kit as package data."""
