"""The GitHub Classroom workflow: learner code runs once, in the sandbox; each step reads a verdict.

GitHub Classroom's command grader awards a step's `max-score` when its
command exits 0, and its table shows one row per step; so there is still one
autograding step per criterion, with its points. But those steps run no
learner code: one grading step before them, started with `sudo` (GitHub's
runners allow it without a password), grades every criterion once with the
learner's code in the sandbox, into a root-owned 0700 folder, and each
per-criterion step only reads its verdict from there (labs/grading/verdicts.py).

The lab kit that grades is checked out from a pinned commit of the
instructor's repository (never the learner's copy of labs/) and installed
non-editable into a root-owned virtualenv outside the workspace
(/opt/lab-kit), so code that ran earlier in the job could not have changed it
and the learner's cannot. The grading step starts from an empty environment
(`env -i`) with nothing but PATH and the database URL: the job's
GITHUB_TOKEN, GITHUB_OUTPUT and the service's DATABASE_URL never reach the
sandbox, which gets only its own role's URL. A Postgres service container
serves the database criteria; bubblewrap is installed for the namespaces.

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
KIT_VENV = "/opt/lab-kit"  # root-owned, outside the workspace
RESULTS = "/var/lib/lab-grading"  # root-owned, 0700; each run's results in a folder of its own
PINNED_REF = re.compile(r"[0-9a-f]{40}")
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
DATABASE_URL = "postgresql://koda:koda@localhost:5432/koda"
GRADE_TIMEOUT = 20  # minutes for the one grading step: every criterion, mypy on a cold cache
READ_TIMEOUT = 1  # minutes for a step that reads one verdict
KIT_PYTHON = f"{KIT_VENV}/bin/python -P -m labs.grading.verdicts"
INSTALL_COMMANDS = (
    f'sudo "$(command -v python)" -m venv {KIT_VENV}',
    # The versions the kit was tested with (the typecheck's stubs come with the base install).
    f"sudo {KIT_VENV}/bin/python -m pip install --no-cache-dir "
    f"-c './{KIT_PATH}/labs/grading/constraints.txt' './{KIT_PATH}[grading]'",
    f"sudo {KIT_PYTHON} install",
)
GRADE_COMMAND = (
    f"sudo env -i PATH=/usr/bin:/bin DATABASE_URL={DATABASE_URL} "
    f"{KIT_PYTHON} grade --tree starter --into {RESULTS}"
)
BUBBLEWRAP_COMMAND = "sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap"


def step_id(criterion: Criterion) -> str:
    """The step id: letters and digits only, as the reporter's runners list expects."""
    return re.sub(r"[^a-z0-9]", "", criterion.key.lower())


def step_command(criterion: Criterion) -> str:
    """The command that exits 0 exactly when the grading step found this criterion met."""
    return f"sudo {KIT_PYTHON} read {criterion.key} --from {RESULTS}"


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
        "# never from this repository's own labs/ folder. The learner's code runs once, in the",
        "# sandbox, in the grading step; each criterion's step only reads its verdict.",
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
        "      - name: Install bubblewrap (the sandbox's namespaces)",
        f"        run: {BUBBLEWRAP_COMMAND}",
        "      - name: Install the lab kit, root-owned, outside the workspace",
        "        run: |",
        *(f"          {command}" for command in INSTALL_COMMANDS),
        "      - name: Grade every criterion once, the learner's code in the sandbox",
        f"        timeout-minutes: {GRADE_TIMEOUT}",
        # A grading step that failed leaves no verdicts: each step below then says so.
        "        continue-on-error: true",
        f"        run: {GRADE_COMMAND}",
    ]
    for criterion in CRITERIA:
        lines += [
            f"      - name: {_quoted(criterion.title)}",
            f"        id: {step_id(criterion)}",
            f"        uses: {COMMAND_GRADER}",
            "        with:",
            f"          test-name: {_quoted(criterion.title)}",
            f"          command: {_quoted(step_command(criterion))}",
            f"          timeout: {READ_TIMEOUT}",
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
