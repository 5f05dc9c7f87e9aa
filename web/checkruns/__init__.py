"""The checks page's runs: every check on a tree and a store, in a child process, so a
learner's bug can neither hang nor kill the dashboard.

check_run.py      a CheckRun: starts the child, reads its report as it grows, ends the run
                  however it ends (a timeout, a crash, the dashboard shutting down)
rows.py           the rows of the page, from the report's lines
child.py          a child process with capped output, killed with all it started
check_process.py  python -m web.checkruns.check_process: what the child runs, writing
                  each line's texts in every language (phrases.py) for every page

The child imports neither Flask nor the views: nothing here does, so it starts fast.
"""
