"""The monolith the lesson warns against: the request handler does the agent's work.

gunicorn labs.bench.inline:app serves the tree's own gateway, with one
change: after POST /chat has persisted the run, the same request thread
claims it, works it and finishes it before the answer goes out. Slow runs
then hold the server's threads, and every other request waits behind them.
"""

from __future__ import annotations

import importlib
import os

from flask import Flask, Response, request

from .agent import execute, tree_modules

TREE = os.environ.get("BENCH_TREE", "solution")
_infra, _states, _errors = tree_modules(TREE)
_store = _infra.make_store()
app: Flask = importlib.import_module(f"{TREE}.gateway").create_app(_store)


@app.after_request
def work_inline(response: Response) -> Response:
    """Do the run's work now, in the handler, before answering."""
    if request.path == "/chat" and response.status_code == 202:
        run_id = str(response.get_json()["runId"])
        message = str((request.get_json(silent=True) or {}).get("message", ""))
        execute(_store, _states, _errors, run_id, message)
    return response
