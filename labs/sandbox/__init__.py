"""A sandbox per submission: the learner's processes apart, limited, and killed at the end."""
