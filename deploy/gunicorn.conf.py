"""gunicorn's settings for the gateway in production: `gunicorn -c deploy/gunicorn.conf.py
'<tree>.gateway:create_app()'`, always behind nginx (deploy/nginx/gateway.conf.template).

A gthread worker gives each connection a thread for as long as the request
takes to arrive, so a client that trickles its bytes holds a thread; a handful
of them would hold them all. nginx reads every request whole before passing it
on, so the threads here only ever wait for the database, never for a client.
Options given on the command line (or in GUNICORN_CMD_ARGS) override these.
"""

# Only nginx talks to gunicorn: loopback here; docker-compose.yml binds 0.0.0.0:3001
# inside the compose network, where nothing is published but nginx's port.
bind = "127.0.0.1:3001"

# Each process calls create_app() once, and so builds its own store and connection pool;
# the threads share that pool, so a process never needs more connections than threads.
worker_class = "gthread"
workers = 2
threads = 8

# A request that takes longer than this is stuck: the worker is killed and replaced.
timeout = 30
graceful_timeout = 20
# nginx keeps its connections to gunicorn open between requests (upstream keepalive).
keepalive = 15

# The proxy already refused oversized headers; these are the same limits, in depth.
limit_request_line = 4094
limit_request_fields = 50
limit_request_field_size = 8190

# No control socket (gunicorn 25+): its default path is one per user, so a second master
# (another tree, a test) would take it over and remove it on exit. Manage gunicorn by signals.
control_socket_disable = True

# The access log is nginx's; errors and worker restarts go to stderr.
accesslog = None
errorlog = "-"
