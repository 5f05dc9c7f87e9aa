"""Checking a tree: the host that imports it, the driver that judges it, and the six checks.

protocol.py     what launchers, hosts and the driver share: HostSpec, HostProcess,
                Launcher, and the host errors (errors.py holds every error here)
launch.py       the fork and exec launchers; pipes.py the PipeHost they return
host.py         the child process that imports the tree (libraries.py first); ops.py
                its answers; clock.py its clock, stopped where the driver says (check 3);
                turns.py the turns a burst's threads take, line by line of the tree
session.py      the driver's end of a host; database.py its own reads on Postgres
driver.py       one check at a time, within its time limit, into a CheckResult
                (result.py)
context.py      what a check runs in; definition.py what a check is
checks/         the six, one module each (check 3's key rule in keys_in_time.py);
                extra.py the extra checks; rules.py the rule each failure names
runner.py       all of them into a Report; report.py the Report, printed live, as JSON
                Lines and as results.json, whose format results_json.py writes
trace.py, marks.py, tidy.py, hints.py, inputs.py   the calls recorded, the broken rule
                marked in them, the shared database kept tidy, the TODO a failure points
                to, the inputs a printed seed replays; catalog.py what pybabel extracts
api.py          what a program outside the package uses of it, in one place (this
                __init__ imports nothing: a tree's host passes through it, and starts fast)
"""
