"""python -m labs bench: the accept path measured against the floor the database allows.

Four parts, one run, one database: (a) raw INSERT ... ON CONFLICT DO NOTHING,
(b) SqlStore.create_run, (c) POST /chat over HTTP through gunicorn, each at
1, 4 and 16 concurrent clients, with the floors under (c) (c0: gunicorn alone,
c1: a Flask route without the store) and the hand-tuned path it replaced
(c-tuned) beside it; and (d) accept latency while 16 slow agent runs are in
flight, in workers (the split) and in the handler (the monolith).
"""
