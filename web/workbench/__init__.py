"""The live bench of the runs pages: one tree's gateway and store, the runs sent through
them, and every attempt made on those runs.

Not to be confused with labs/bench, the benchmark: this bench is where a learner
provokes the lesson by hand. A Workbench is built up in layers, each a module:

tree_link.py       the line to the tree's host, a process killed when it stops answering
remote_store.py    the tree's store seen through that line: plain records back, and the
                   tree's errors mirrored by name
sent_runs.py       the runs this bench sent, until the database loses them
gateway_client.py  POST /sessions and POST /chat, as a client (or a retrying one) would
moves.py           the lesson's buttons: advance, force done -> running, duplicate a seq
workbench.py       all of the above for one tree, the live table, the notices
demo_executor.py   a preview of day 9's worker, playing pending runs slowly
journal.py         what happened to each run; outcome.py what the last button did
"""
