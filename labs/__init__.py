"""The lab kit: the six self-checks, their runner and CLI, traces, and instructor tools."""
