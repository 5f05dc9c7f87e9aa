"""The tests' throwaway Postgres cluster; it lives in labs/ so the lab's commands share it."""

from labs.pg.cluster import Autocommit, TempCluster, find_bindir, free_port
from labs.pg.databases import drop_database

__all__ = ["TempCluster", "drop_database_of", "find_bindir", "free_port"]


def drop_database_of(cluster: TempCluster, name: str) -> None:
    """Drop a test's database from the cluster as the kit drops its own, sessions and all."""
    with Autocommit(cluster.url()) as cursor:
        drop_database(cursor, name)
