"""What the gateway and the worker agree on: tables, statuses, keys, ids, errors."""
