"""The worker side. Today it only reads; executing runs is the next day's job."""

from .queries import pending_runs as pending_runs
