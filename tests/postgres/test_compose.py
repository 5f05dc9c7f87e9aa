"""docker-compose.yml, checked by parsing (CI has no Docker engine) against README and Alembic."""

from __future__ import annotations

import configparser
import re
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from labs.trees import REPO_ROOT

APP_SERVICES = ("gateway", "worker", "dashboard")


def with_defaults(value: str) -> str:
    """Resolve ${VAR:-default} the way compose does when VAR is unset."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The parsed docker-compose.yml."""
    parsed: dict[str, Any] = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    return parsed


def test_postgres_is_pgvector_16_with_the_koda_credentials_on_5508(compose: dict[str, Any]) -> None:
    """The database service matches what the README tells learners to connect to."""
    postgres = compose["services"]["postgres"]
    assert postgres["image"] == "pgvector/pgvector:pg16"
    assert postgres["environment"] == {
        "POSTGRES_USER": "koda",
        "POSTGRES_PASSWORD": "koda",
        "POSTGRES_DB": "koda",
    }
    assert postgres["ports"] == ["5508:5432"]


def test_postgres_has_the_pg_isready_healthcheck_and_a_named_volume(
    compose: dict[str, Any],
) -> None:
    """pg_isready every 2 s, 3 s timeout, 15 retries; data on a volume declared at the top."""
    postgres = compose["services"]["postgres"]
    check = postgres["healthcheck"]
    assert "pg_isready" in " ".join(check["test"])
    assert (check["interval"], check["timeout"], check["retries"]) == ("2s", "3s", 15)
    (volume,) = postgres["volumes"]
    name, _, target = volume.partition(":")
    assert name in compose["volumes"] and target == "/var/lib/postgresql/data"


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
    assert gateway[0] == "gunicorn" and "0.0.0.0:3000" in gateway
    module, _, attribute = gateway[-1].partition(":")
    assert (REPO_ROOT / module.replace(".", "/")).with_suffix(".py").is_file()
    assert attribute == "app"


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
    """alembic.ini's script_location holds env.py and a versions folder per tree."""
    ini = configparser.ConfigParser()
    ini.read(REPO_ROOT / "alembic.ini")
    location = ini.get("alembic", "script_location", vars={"here": str(REPO_ROOT)})
    assert (REPO_ROOT / "migrations" / "env.py").samefile(f"{location}/env.py")
    assert {p.name for p in (REPO_ROOT / "migrations" / "versions").iterdir()} == {
        "starter",
        "solution",
    }
