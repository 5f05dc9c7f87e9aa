"""Tests that need a real Postgres: the Store contract, migrations, checks, readiness, compose."""
