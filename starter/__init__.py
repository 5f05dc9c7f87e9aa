"""A tree of the day-8 lab: gateway, worker, shared and infra, fixed where TODO(check N) says."""
