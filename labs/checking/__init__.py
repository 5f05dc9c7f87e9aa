"""Checking a tree: the host that imports it, the driver that judges it, and the six checks."""
