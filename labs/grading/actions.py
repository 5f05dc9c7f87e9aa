"""The plain GitHub Actions workflow: one job grades the learner's repository it runs in.

For courses that grade in the learners' own repositories, without a
classroom service: every push runs one job that

- checks the submission out into `submission/` and the kit, from the
  instructor's repository at a pinned commit, into `kit/` (never the
  learner's copy of labs/), neither credentialed;
- installs the kit, as root, non-editable, into a root-owned virtualenv
  outside the workspace (/opt/lab-kit), each Python there run with `-I` from
  `/`, so nothing of the learner's is on its path or read as configuration;
- grades every criterion once, as root from an empty environment (`env -i`:
  nothing but PATH and the Postgres service's URL; GITHUB_TOKEN and the
  runner's variables stay behind), the learner's code only in the sandbox,
  which must be bubblewrap's (`--require-bwrap`: the job fails rather than
  grade with less), into a new folder of its own under /var/lib/lab-grading
  (a runner that keeps its files grades each job afresh);
- puts the points table in the job's summary ($GITHUB_STEP_SUMMARY), uploads
  results.json and junit.xml as an artifact, and fails unless every criterion
  passed.

The workflow in .github/workflows/grade.yml is this module's output with
placeholders; `python -m labs release --kit-repository OWNER/NAME --kit-ref SHA`
writes the learner repository's copy with the real values.
"""

from __future__ import annotations

import re

from labs.sandbox.modes import BWRAP_FLAG

WORKFLOW_PATH = ".github/workflows/grade.yml"
PLACEHOLDER_REPOSITORY = "your-org/mini-koda-lab-template"
PLACEHOLDER_REF = "0" * 40
PINNED_REF = re.compile(r"[0-9a-f]{40}")
SUBMISSION = "submission"
KIT_PATH = "kit"
KIT_VENV = "/opt/lab-kit"  # root-owned, outside the workspace
RESULTS = "/var/lib/lab-grading"  # root-owned, 0700; each run's results in a folder of its own
CHECKOUT = "actions/checkout@v5"
SETUP_PYTHON = "actions/setup-python@v6"
UPLOAD = "actions/upload-artifact@v5"
DATABASE_URL = "postgresql://koda:koda@localhost:5432/koda"
GRADE_TIMEOUT = 20  # minutes for the grading step: every criterion, mypy on a cold cache
KIT = f"{KIT_VENV}/bin/python -I"
BUBBLEWRAP_COMMAND = "sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap"
INSTALL_COMMANDS = (
    "cd /",
    f'sudo "$(command -v python)" -I -m venv {KIT_VENV}',
    # The versions the kit was tested with (the typecheck's stubs come with the base install).
    f"sudo {KIT} -m pip install --no-cache-dir "
    f'-c "$GITHUB_WORKSPACE/{KIT_PATH}/labs/grading/constraints.txt" '
    f'"$GITHUB_WORKSPACE/{KIT_PATH}[grading]"',
    f"sudo {KIT} -m labs.grading.autograde prepare",
)
GRADE_COMMANDS = (
    "cd /",
    f"sudo env -i PATH=/usr/bin:/bin DATABASE_URL={DATABASE_URL} "
    f"{KIT} -m labs.grading.autograde grade {BWRAP_FLAG} "
    f'--tree "$GITHUB_WORKSPACE/{SUBMISSION}/starter" '
    f'--into {RESULTS} | tee "$RUNNER_TEMP/grading.log"',
    'folder=$(tail -n 1 "$RUNNER_TEMP/grading.log")',
    'mkdir -p "$RUNNER_TEMP/grade"',
    'for name in results.json junit.xml summary.md; do sudo cat "$folder/$name" '
    '> "$RUNNER_TEMP/grade/$name"; done',
    'cat "$RUNNER_TEMP/grade/summary.md" >> "$GITHUB_STEP_SUMMARY"',
)
VERDICT_COMMAND = (
    "python -I -c 'import json, sys; "
    'sys.exit(json.load(open(sys.argv[1]))["status"] != "pass")\' '
    '"$RUNNER_TEMP/grade/results.json"'
)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _run(commands: tuple[str, ...]) -> list[str]:
    return ["        run: |", *(f"          {command}" for command in commands)]


def grading_workflow(repository: str = PLACEHOLDER_REPOSITORY, ref: str = PLACEHOLDER_REF) -> str:
    """The workflow's text, grading with the kit at repository@ref."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        raise ValueError(f"{repository!r} is not a GitHub repository name like owner/name")
    if not PINNED_REF.fullmatch(ref):
        raise ValueError(f"{ref!r} is not a full commit hash: pin the kit to one commit")
    lines = [
        "# Grading on plain GitHub Actions: one job, the points in the job's summary, results.json",
        "# and junit.xml as an artifact. Written by `python -m labs release`; see",
        '# labs/INSTRUCTORS.md, "GitHub Actions". The kit that grades comes from the',
        "# instructor's repository at a pinned commit, never from this repository's labs/.",
        "name: Grade",
        "on:",
        "  push:",
        "  workflow_dispatch:",
        "permissions:",
        "  contents: read",
        "jobs:",
        "  grade:",
        "    runs-on: ubuntu-latest",
        # The template repository itself holds the unsolved starter: it grades learners only.
        f"    if: github.repository != '{repository}'",
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
        f"        uses: {CHECKOUT}",
        "        with:",
        f"          path: {SUBMISSION}",
        "          persist-credentials: false",
        "      - name: Set up Python",
        f"        uses: {SETUP_PYTHON}",
        "        with:",
        '          python-version: "3.11"',
        "      - name: Check out the lab kit at its pinned commit",
        f"        uses: {CHECKOUT}",
        "        with:",
        f"          repository: {_quoted(repository)}",
        # Quoted: YAML would read an all-digit hash as a number.
        f"          ref: {_quoted(ref)}",
        f"          path: {KIT_PATH}",
        "          persist-credentials: false",
        "      - name: Install bubblewrap (the sandbox's namespaces)",
        f"        run: {BUBBLEWRAP_COMMAND}",
        "      - name: Install the lab kit, root-owned, outside the workspace",
        *_run(INSTALL_COMMANDS),
        "      - name: Grade every criterion once, the learner's code in the sandbox",
        f"        timeout-minutes: {GRADE_TIMEOUT}",
        *_run(GRADE_COMMANDS),
        "      - name: Keep results.json and junit.xml",
        "        if: always()",
        f"        uses: {UPLOAD}",
        "        with:",
        "          name: grade",
        "          path: |",
        "            ${{ runner.temp }}/grade/results.json",
        "            ${{ runner.temp }}/grade/junit.xml",
        "          if-no-files-found: error",
        "      - name: Every criterion passed",
        f"        run: {VERDICT_COMMAND}",
    ]
    return "\n".join(lines) + "\n"
