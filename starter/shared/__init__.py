"""What the gateway and the worker agree on: tables, ids, statuses, keys, errors."""
