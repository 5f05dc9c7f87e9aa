"""The tests' throwaway Postgres cluster; it lives in labs/ so the lab's commands share it."""

from labs.pg.cluster import TempCluster, find_bindir, free_port

__all__ = ["TempCluster", "find_bindir", "free_port"]
