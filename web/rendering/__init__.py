"""Drawing the pages: the whole page or its htmx fragment, only what changed on a live page,
and the pictures laid out as data for the templates to draw.

fragments.py    one context, two renderings: the page, or its fragment for htmx
live_parts.py   a live page part by part, and what changed since the page last looked
sequence.py     a check's trace as a sequence diagram (the checks page)
state_graph.py  the run state machine with its counts (the runs page)
strip.py        a run's messages ordered by seq, duplicates and gaps marked (a run's page)
"""
