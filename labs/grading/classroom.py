"""The GitHub Classroom workflow: one autograding step per criterion, in the actions' conventions.

GitHub Classroom's command grader awards a step's `max-score` when its
command exits 0, so each step grades one criterion with
`--lab-only KEY --lab-fail-under 100%`: exit 0 exactly when that criterion
passes. The reporter step gathers each step's result from the
`<ID>_RESULTS` environment variables. The lab kit that grades is checked out
from a pinned commit of the instructor's repository (never the learner's copy
of labs/), and run with `python -P` so a `labs/` folder in the learner's
repository cannot shadow it. A Postgres service container serves the database
criteria.

The workflow in .github/workflows/classroom.yml is this module's output with
placeholders; `python -m labs release --kit-repository OWNER/NAME --kit-ref SHA`
writes the learner repository's copy with the real values.
"""

from __future__ import annotations

import re

from .criteria import CRITERIA, Criterion

WORKFLOW_PATH = ".github/workflows/classroom.yml"
PLACEHOLDER_REPOSITORY = "your-org/mini-koda-lab-template"
PLACEHOLDER_REF = "0" * 40
KIT_PATH = ".lab-kit"
PINNED_REF = re.compile(r"[0-9a-f]{40}")
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
DATABASE_URL = "postgresql://koda:koda@localhost:5432/koda"
# Minutes, as the command grader counts them: mypy on a cold cache is the slow one.
TIMEOUTS = {"memory": 5, "postgres": 5, "typecheck": 10, "migration": 5}


def step_id(criterion: Criterion) -> str:
    """The step id: letters and digits only, as the reporter's runners list expects."""
    return re.sub(r"[^a-z0-9]", "", criterion.key.lower())


def step_command(criterion: Criterion) -> str:
    """The command that exits 0 exactly when the learner's tree meets this criterion."""
    return (
        "python -P -m labs.grading.pytest_main --lab-tree starter "
        f"--lab-only {criterion.key} --lab-fail-under 100% "
        f"--lab-results /tmp/lab-{step_id(criterion)}.json -q"
    )


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def classroom_workflow(repository: str = PLACEHOLDER_REPOSITORY, ref: str = PLACEHOLDER_REF) -> str:
    """The workflow's text, grading with the kit at repository@ref."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        raise ValueError(f"{repository!r} is not a GitHub repository name like owner/name")
    if not PINNED_REF.fullmatch(ref):
        raise ValueError(f"{ref!r} is not a full commit hash: pin the kit to one commit")
    lines = [
        "# GitHub Classroom autograding: one step per criterion of the lab, with its points.",
        '# Written by `python -m labs release`; see labs/INSTRUCTORS.md, "GitHub Classroom".',
        "# The lab kit that grades comes from the instructor's repository at a pinned commit,",
        "# never from this repository's own labs/ folder.",
        "name: Autograding Tests",
        "on:",
        "  - push",
        "  - repository_dispatch",
        "  - workflow_dispatch",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        # The template repository itself holds the unsolved starter: it grades learners only.
        f"    if: github.actor != 'github-classroom[bot]' && github.repository != '{repository}'",
        "    services:",
        "      postgres:",
        "        image: postgres:15",
        "        env:",
        "          POSTGRES_USER: koda",
        "          POSTGRES_PASSWORD: koda",
        "          POSTGRES_DB: koda",
        "        ports:",
        "          - 5432:5432",
        "        options: >-",
        "          --health-cmd pg_isready --health-interval 2s --health-timeout 3s",
        "          --health-retries 15",
        "    env:",
        f"      DATABASE_URL: {DATABASE_URL}",
        "    steps:",
        "      - name: Check out the submission",
        "        uses: actions/checkout@v4",
        "      - name: Set up Python",
        "        uses: actions/setup-python@v5",
        "        with:",
        '          python-version: "3.11"',
        "      - name: Check out the lab kit at its pinned commit",
        "        uses: actions/checkout@v4",
        "        with:",
        f"          repository: {_quoted(repository)}",
        # Quoted: YAML would read an all-digit hash as a number.
        f"          ref: {_quoted(ref)}",
        f"          path: {KIT_PATH}",
        "      - name: Install the lab kit",
        f"        run: python -m pip install -c './{KIT_PATH}/labs/grading/constraints.txt'"
        f" -e './{KIT_PATH}[grading]'",
    ]
    for criterion in CRITERIA:
        lines += [
            f"      - name: {_quoted(criterion.title)}",
            f"        id: {step_id(criterion)}",
            f"        uses: {COMMAND_GRADER}",
            "        with:",
            f"          test-name: {_quoted(criterion.title)}",
            f"          command: {_quoted(step_command(criterion))}",
            f"          timeout: {TIMEOUTS[criterion.kind]}",
            f"          max-score: {criterion.points}",
        ]
    ids = [step_id(c) for c in CRITERIA]
    lines += [
        "      - name: Autograding Reporter",
        f"        uses: {REPORTER}",
        "        env:",
        *(f'          {i.upper()}_RESULTS: "${{{{steps.{i}.outputs.result}}}}"' for i in ids),
        "        with:",
        f"          runners: {','.join(ids)}",
    ]
    return "\n".join(lines) + "\n"
