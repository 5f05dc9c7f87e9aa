"""docker-compose.yml, checked by parsing (CI has no Docker engine) against the READMEs and
Alembic; its Postgres init script, run against a real throwaway cluster."""

from __future__ import annotations

import configparser
import os
import re
import runpy
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.errors
import pytest
import yaml
from sqlalchemy.engine import make_url

from labs.pg.cluster import Autocommit
from labs.trees.finding import REPO_ROOT
from tests.support.pgcluster import TempCluster

APP_SERVICES = ("gateway", "worker", "dashboard")


def with_defaults(value: str) -> str:
    """Resolve ${VAR:-default} the way compose does when VAR is unset."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The parsed docker-compose.yml."""
    parsed: dict[str, Any] = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    return parsed


def test_postgres_is_pgvector_16_with_the_koda_role_on_loopback_5508(
    compose: dict[str, Any],
) -> None:
    """The database service matches the README: koda/koda on localhost:5508, this machine only."""
    postgres = compose["services"]["postgres"]
    assert postgres["image"] == "pgvector/pgvector:pg16"
    environment = postgres["environment"]
    assert environment["POSTGRES_DB"] == "koda" and environment["KODA_PASSWORD"] == "koda"
    assert postgres["ports"] == ["127.0.0.1:5508:5432"]


def test_the_app_role_is_not_the_superuser_and_has_a_password_of_its_own(
    compose: dict[str, Any],
) -> None:
    """The image's superuser is someone else; the init script makes koda, with its own password."""
    postgres = compose["services"]["postgres"]
    environment = postgres["environment"]
    assert environment["POSTGRES_USER"] != "koda"
    assert with_defaults(environment["POSTGRES_PASSWORD"]) != environment["KODA_PASSWORD"]
    init = [v for v in postgres["volumes"] if "/docker-entrypoint-initdb.d/" in v]
    assert [v.split(":")[0] for v in init] == ["./deploy/postgres-init.sh"]
    assert init[0].endswith(":ro")


@pytest.mark.parametrize("service", ("postgres", "proxy", "dashboard"))
def test_every_published_port_is_bound_to_loopback(compose: dict[str, Any], service: str) -> None:
    """Nothing is published on every interface: each port mapping starts with 127.0.0.1."""
    for mapping in compose["services"][service]["ports"]:
        assert str(mapping).startswith("127.0.0.1:"), mapping
    published = {s for s, spec in compose["services"].items() if spec.get("ports")}
    assert published == {"postgres", "proxy", "dashboard"}


def test_postgres_has_the_pg_isready_healthcheck_and_a_named_volume(
    compose: dict[str, Any],
) -> None:
    """pg_isready every 2 s, 3 s timeout, 15 retries; data on a volume declared at the top."""
    postgres = compose["services"]["postgres"]
    check = postgres["healthcheck"]
    assert "pg_isready" in " ".join(check["test"])
    assert (check["interval"], check["timeout"], check["retries"]) == ("2s", "3s", 15)
    data = [v for v in postgres["volumes"] if v.endswith(":/var/lib/postgresql/data")]
    assert [v.partition(":")[0] in compose["volumes"] for v in data] == [True]


def test_migrate_runs_alembic_once_for_a_tree_that_has_a_migration(compose: dict[str, Any]) -> None:
    """The one-shot migrate service runs `alembic -x tree=<tree> upgrade head` after postgres."""
    migrate = compose["services"]["migrate"]
    words = [with_defaults(word) for word in migrate["command"]]
    assert words[0] == "alembic" and words[-2:] == ["upgrade", "head"]
    tree = words[words.index("-x") + 1].removeprefix("tree=")
    assert list((REPO_ROOT / "migrations" / "versions" / tree).glob("*.py"))
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert migrate.get("restart") == "no"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_the_app_services_wait_for_a_healthy_database_and_a_finished_migration(
    compose: dict[str, Any], service: str
) -> None:
    """Each app service waits for service_healthy and service_completed_successfully."""
    assert compose["services"][service]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }


@pytest.mark.parametrize("service", ("migrate", *APP_SERVICES))
def test_every_lab_service_builds_from_the_dockerfile_and_reaches_postgres(
    compose: dict[str, Any], service: str
) -> None:
    """Each builds the repository's Dockerfile and connects to the postgres service as koda."""
    spec = compose["services"][service]
    assert spec["build"] == "." and (REPO_ROOT / "Dockerfile").is_file()
    url = make_url(spec["environment"]["DATABASE_URL"])
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "koda",
        "koda",
        "postgres",
        5432,
        "koda",
    )


def test_the_commands_name_modules_that_exist(compose: dict[str, Any]) -> None:
    """worker and dashboard run `python -m` on packages here; gunicorn serves the gateway's app."""
    services = compose["services"]
    assert services["dashboard"]["command"] == ["python", "-m", "web", "--host", "0.0.0.0"]
    for service in ("worker", "dashboard"):
        module = with_defaults(services[service]["command"][2])
        assert (REPO_ROOT / module.replace(".", "/") / "__main__.py").is_file(), module
    gateway = [with_defaults(word) for word in services["gateway"]["command"]]
    assert gateway[0] == "gunicorn"
    assert (REPO_ROOT / gateway[gateway.index("--config") + 1]).is_file()
    module, _, factory = gateway[-1].partition(":")
    package = REPO_ROOT / module.replace(".", "/")
    assert factory == "create_app()"
    assert "def create_app(" in (package / "__init__.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("service", ["gateway", "worker"])
def test_the_tree_services_read_the_schema_that_migrate_fills(
    compose: dict[str, Any], service: str
) -> None:
    """alembic -x tree=T puts T's tables in schema T; gateway and worker set DB_SCHEMA to it."""
    words = [with_defaults(word) for word in compose["services"]["migrate"]["command"]]
    tree = words[words.index("-x") + 1].removeprefix("tree=")
    assert with_defaults(compose["services"][service]["environment"]["DB_SCHEMA"]) == tree


def test_nginx_stands_in_front_of_the_gateway_on_its_port(compose: dict[str, Any]) -> None:
    """The proxy renders the shipped template, points at gunicorn's bind, and is the one way in."""
    gateway, proxy = compose["services"]["gateway"], compose["services"]["proxy"]
    command = gateway["command"]
    bind = command[command.index("--bind") + 1]
    assert "ports" not in gateway and gateway["expose"] == [bind.rpartition(":")[2]]
    assert proxy["image"].startswith("nginx:")
    environment = proxy["environment"]
    assert environment["GATEWAY_UPSTREAM"] == f"gateway:{bind.rpartition(':')[2]}"
    (template,) = proxy["volumes"]
    source, target, _ = template.split(":")
    assert (REPO_ROOT / source).is_file() and target.startswith("/etc/nginx/templates/")
    text = (REPO_ROOT / source).read_text()
    assert "${GATEWAY_UPSTREAM}" in text and "${NGINX_LISTEN}" in text
    assert proxy["ports"] == [f"127.0.0.1:3000:{environment['NGINX_LISTEN']}"]


@pytest.mark.parametrize("service", ("migrate", *APP_SERVICES))
def test_every_lab_service_sees_the_checkout_and_app_services_restart(
    compose: dict[str, Any], service: str
) -> None:
    """Edits and generated migrations reach the containers; a crashed service comes back."""
    spec = compose["services"][service]
    assert ".:/lab" in spec["volumes"]
    if service != "migrate":
        assert spec["restart"] == "unless-stopped"


def test_the_readme_and_env_example_point_at_the_published_port() -> None:
    """README's compose steps and .env.example use the URL compose publishes on localhost."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## On Postgres")[1].split("\n## ")[0]
    host_url = "postgresql://koda:koda@localhost:5508/koda"
    assert "docker compose up -d" in section and host_url in section
    assert f"DATABASE_URL={host_url}" in (REPO_ROOT / ".env.example").read_text().splitlines()
    assert "alembic -x tree=solution upgrade head" in section
    assert "alembic -x tree=starter revision --autogenerate" in section


def test_alembic_ini_points_at_the_one_environment() -> None:
    """alembic.ini names the kit's packaged environment and migrations/versions, a folder a tree."""
    ini = configparser.ConfigParser()
    ini.read(REPO_ROOT / "alembic.ini")
    location = ini.get("alembic", "script_location", vars={"here": str(REPO_ROOT)})
    package, _, folder = location.partition(":")
    environment = files(package) / folder
    assert environment.joinpath("env.py").is_file()
    assert environment.joinpath("script.py.mako").is_file()
    root = ini.get("alembic", "versions_root", vars={"here": str(REPO_ROOT)})
    assert Path(root) == REPO_ROOT / "migrations" / "versions"
    assert {p.name for p in Path(root).iterdir()} == {"starter", "solution"}


def test_the_init_script_makes_koda_an_owner_that_cannot_run_programs(
    own_cluster: TempCluster,
) -> None:
    """deploy/postgres-init.sh as the image runs it: koda owns koda; no superuser over TCP."""
    own_cluster.create_database("koda")
    environment = {
        "PATH": f"{own_cluster.bindir}:{os.environ['PATH']}",
        "POSTGRES_USER": "postgres",
        "POSTGRES_DB": "koda",
        "KODA_PASSWORD": "koda",
        "PGDATA": str(own_cluster.datadir),
        "PGHOST": str(own_cluster.socket_dir),
        "PGPORT": str(own_cluster.port),
    }
    script = ["sh", str(REPO_ROOT / "deploy" / "postgres-init.sh")]
    if os.geteuid() == 0:  # the image runs the script as the cluster's own user
        script = ["runuser", "-u", "postgres", "--", *script]
    subprocess.run(script, env=environment, check=True, capture_output=True, timeout=60)
    with Autocommit(own_cluster.url("koda")) as cursor:
        cursor.execute("SELECT pg_reload_conf()")
        cursor.execute("SELECT rolsuper, rolcreatedb FROM pg_roles WHERE rolname = 'koda'")
        assert cursor.fetchone() == (False, True)
        cursor.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'koda'")
        assert cursor.fetchone() == ("koda",)
        cursor.execute(
            "SELECT type, database, user_name, address, auth_method, error "
            "FROM pg_hba_file_rules ORDER BY line_number LIMIT 1"
        )
        assert cursor.fetchone() == ("host", ["all"], ["postgres"], "all", "reject", None)
    koda = own_cluster.url("koda").replace("postgres@", "koda@")
    with Autocommit(koda) as cursor:
        cursor.execute("CREATE SCHEMA solution")  # what the migration needs, it may do
        cursor.execute("CREATE TABLE solution.t (line text)")
        with pytest.raises(psycopg2.errors.InsufficientPrivilege):
            cursor.execute("COPY solution.t FROM PROGRAM 'id'")


def test_the_deploy_readme_production_steps_use_the_shipped_files_and_their_variables() -> None:
    """deploy/README.md's "In production" renders the template with its own variables and runs
    the config."""
    readme = (REPO_ROOT / "deploy" / "README.md").read_text()
    section = readme.split("## In production")[1].split("\n## ")[0]
    template = (REPO_ROOT / "deploy" / "nginx" / "gateway.conf.template").read_text()
    variables = set(re.findall(r"\$\{(\w+)\}", template))
    assert variables == {"GATEWAY_UPSTREAM", "NGINX_LISTEN"}
    for name in variables:
        assert f"{name}=" in section and f"${{{name}}}" in section
    assert "apt-get install -y nginx" in section
    assert "gunicorn --config deploy/gunicorn.conf.py 'solution.gateway:create_app()'" in section
    config = runpy.run_path(str(REPO_ROOT / "deploy" / "gunicorn.conf.py"))
    assert f"GATEWAY_UPSTREAM={config['bind']}" in section
    assert config["worker_class"] == "gthread"
