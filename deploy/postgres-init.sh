#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume: the
# image runs every script in /docker-entrypoint-initdb.d/ as its superuser.
#
# The lab's services connect as koda, which owns the koda database and may
# create scratch databases (CREATEDB, for `python -m labs bench`) but is not a
# superuser: its password, written in every service's DATABASE_URL, cannot run
# programs in the container (COPY ... FROM PROGRAM needs a superuser).
set -e

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v koda_password="$KODA_PASSWORD" <<'SQL'
CREATE ROLE koda LOGIN CREATEDB NOSUPERUSER NOCREATEROLE PASSWORD :'koda_password';
ALTER DATABASE koda OWNER TO koda;
SQL

# The superuser logs in only through the container's own socket
# (`docker compose exec postgres psql -U postgres`), never over the network:
# the first matching line of pg_hba.conf wins, so this one goes on top.
sed -i "1i host all $POSTGRES_USER all reject" "$PGDATA/pg_hba.conf"
