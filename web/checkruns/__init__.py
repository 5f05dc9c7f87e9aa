"""The checks page's runs: every check on a tree and a store, driven from a thread of the
dashboard, the tree in host processes of its own, so a learner's bug can neither hang nor
kill the dashboard.

check_run.py  a CheckRun: drives the checks in a thread, each row as its check finishes,
              and ends the run however it ends (a timeout, the dashboard shutting down)
run_hosts.py  the run's hosts, which another thread can kill when the run must end early
rows.py       the rows of the page, from the results as they come
phrases.py    the driver's thread words each message in every language, for every page
"""
