"""The benchmark's report: a table for people, JSON for the record.

The report speaks the learner's language; the figures and the JSON (report.as_dict) do
not change with it. Table columns are padded by display width with wcwidth, since a
Chinese character takes two terminal columns.
"""

from __future__ import annotations

import wcwidth

from labs.term.i18n import N_, _

from .model import BenchReport
from .stats import Measurement

PART_NAMES = {
    "a": N_("(a) raw INSERT ... ON CONFLICT"),
    "b": N_("(b) SqlStore.create_run"),
    "c0": N_("(c0) gunicorn, app does nothing"),
    "c1": N_("(c1) gunicorn, Flask parses, no store"),
    "c": N_("(c) POST /chat via gunicorn"),
    "c-tuned": N_("(c-tuned) hand-tuned POST /chat"),
    "d-split": N_("(d) split: runs in workers"),
    "d-inline": N_("(d) inline: runs in handler"),
}
# The layers of one request (BenchReport.layer_costs and cpu_split) and the processes whose
# CPU is metered (Measurement.cpu_ms), as the report names them.
LAYER_NAMES = {
    "database": N_("database"),
    "store": N_("store"),
    "http_server": N_("http server"),
    "flask": N_("flask"),
    "route": N_("route"),
    "total": N_("total"),
}
PROCESS_NAMES = {"postgres": "postgres", "server": N_("server"), "client": N_("client")}
# (ratio, concurrency, target): the store at least 0.45 of the raw insert at one client, a guard
# against a slower store. c/c-tuned is listed, not judged: the plain Core accept path costs more
# CPU than the hand-tuned one (tuned.py), the price of trees that read as a lesson.
TARGETS = [("b/a", 1, 0.45)]
# Terminal columns of the measurement table: the part's name (wider if a name needs it),
# then tool, clients, ops/s, p50 ms, p99 ms and errors.
NAME_WIDTH = 40
COLUMN_WIDTHS = (8, 8, 10, 10, 10, 8)
# The part's name in the "CPU per operation" lines (wider if a name needs it).
CPU_NAME_WIDTH = 34


def _part_name(part: str) -> str:
    """A part's name in the learner's language (an unknown part keeps its key)."""
    return _(PART_NAMES[part]) if part in PART_NAMES else part


def _measured_name(m: Measurement) -> str:
    """The name of one row: the part, and the arrival rate of an open-loop load."""
    name = _part_name(m.part)
    if m.loop == "open":
        name += f" @{m.rate:.0f}/s"
    return name


def _listed(items: list[str]) -> str:
    """Items one after another, separated as the language separates a list."""
    return _(", ").join(items)


def _named_figures(figures: dict[str, float], names: dict[str, str]) -> str:
    """Figures such as {"database": 0.5} as "database 0.500, ...", names translated."""
    return _listed(
        [
            f"{_(names[key]) if key in names else key.replace('_', ' ')} {value:.3f}"
            for key, value in figures.items()
        ]
    )


def _cells(name: str, cells: list[str], name_width: int) -> str:
    """One table line: the name padded on the right, each cell on the left, by display width."""
    return wcwidth.ljust(name, name_width) + "".join(
        wcwidth.rjust(cell, width) for cell, width in zip(cells, COLUMN_WIDTHS, strict=True)
    )


def _row(m: Measurement, name_width: int = NAME_WIDTH) -> str:
    """One measurement as a table line."""
    figures = [
        m.tool,
        str(m.clients),
        f"{m.throughput:.0f}",
        f"{m.p50_ms:.2f}",
        f"{m.p99_ms:.2f}",
        str(m.errors),
    ]
    return _cells(_measured_name(m), figures, name_width)


def _header(name_width: int = NAME_WIDTH) -> str:
    """The table's column heads."""
    heads = [_("tool"), _("clients"), _("ops/s"), "p50 ms", "p99 ms", _("errors")]
    return _cells(_("part"), heads, name_width)


def format_report(report: BenchReport) -> str:
    """The whole run as tables: throughput, ratios, layer costs, (d), the memory store."""
    machine, settings = report.machine, report.settings
    tabled = [*_groups(report), report.cross_check, report.accept]
    name_width = max(
        NAME_WIDTH,
        wcwidth.width(_("part")) + 1,
        *(wcwidth.width(_measured_name(m)) + 1 for group in tabled for m in group),
    )
    lines = [
        _("machine: {cpus} cores, Python {python}, Postgres {postgres} ({platform})").format(
            cpus=machine["cpus"],
            python=machine["python"],
            postgres=machine["postgres"],
            platform=machine["platform"],
        ),
        _(
            "windows: {seconds} s measured per load; gunicorn gthread "
            "{workers} processes x {threads} threads for (c0), (c1), (c) and (c-tuned)"
        ).format(
            seconds=settings["seconds"], workers=settings["workers"], threads=settings["threads"]
        ),
        "",
        _header(name_width),
    ]
    for group in report.parts().values():
        lines += [_row(m, name_width) for m in group]
    if report.open_http:
        lines += ["", _("open loop (latency from each request's intended send time):")]
        lines += [
            _row(m, name_width) + "  " + _("late {count}").format(count=m.late)
            for m in report.open_http
        ]
    if report.cross_check:
        lines += ["", _("cross-check, the same loads from the Python generator:")]
        lines += [_row(m, name_width) for m in report.cross_check]
    lines += ["", *_ratio_lines(report)]
    costs = report.layer_costs()
    if costs:
        lines += [
            "",
            _("per request at one client (ms): {costs}").format(
                costs=_named_figures(costs, LAYER_NAMES)
            ),
        ]
    split = report.cpu_split()
    if split:
        top = max(m.clients for m in report.http)
        lines.append(
            _("CPU per request at {clients} clients (ms): {costs}").format(
                clients=top, costs=_named_figures(split, LAYER_NAMES)
            )
        )
    metered = [m for group in _groups(report) for m in group if m.cpu_ms]
    if metered:
        lines += ["", _("CPU per operation (ms), by process:")]
        lines += _cpu_lines(metered)
    if report.accept:
        lines += [
            "",
            _(
                "(d) accept latency while 16 slow agent runs ({seconds} s each) "
                "are in flight, gunicorn 1 process x 16 threads:"
            ).format(seconds=settings["agent_seconds"]),
            *[_row(m, name_width) for m in report.accept],
            "    "
            + _("slow runs started: split {split}, inline {inline}").format(
                split=report.slow_runs_started.get("split", 0),
                inline=report.slow_runs_started.get("inline", 0),
            ),
        ]
    if report.memory:
        lines += ["", _("memory store, per call (us):")]
        lines += _memory_lines(report)
    steps = settings.get("step_seconds")
    if isinstance(steps, dict):
        lines += [
            "",
            _("time per step (s): {seconds}").format(
                seconds=_listed([f"{v}" for v in steps.values()])
            ),
        ]
    lines += [
        "",
        _("total wall time {seconds} s").format(seconds=settings.get("wall_seconds", "?")),
    ]
    return "\n".join(lines)


def _groups(report: BenchReport) -> list[list[Measurement]]:
    return [*report.parts().values(), report.open_http]


def _cpu_lines(metered: list[Measurement]) -> list[str]:
    """CPU per operation, one line per load: the part, the clients, each process's share."""
    name_width = max(CPU_NAME_WIDTH, *(wcwidth.width(_part_name(m.part)) + 1 for m in metered))
    lines = []
    for m in metered:
        spent = _named_figures(dict(sorted(m.cpu_ms.items())), PROCESS_NAMES)
        shown = _("{clients} clients: {spent}").format(clients=f"{m.clients:>4}", spent=spent)
        lines.append("    " + wcwidth.ljust(_part_name(m.part), name_width) + shown)
    return lines


def _memory_lines(report: BenchReport) -> list[str]:
    """The memory store's cost per call at each size, and where a fill ran out of time."""
    lines = []
    for cost in report.memory:
        if cost.rows >= cost.target_rows:
            line = _("{operation} at {rows} rows: {per_call}")
        else:
            line = _(
                "{operation} at {rows} rows: {per_call} "
                "(fill stopped at {reached} of {target} rows: time budget)"
            )
        shown = line.format(
            operation=f"{cost.operation:16}",  # a method's name: ASCII, so format pads it right
            rows=f"{cost.rows:>7,}",
            per_call=f"{cost.per_call_us:>9.1f}",
            reached=f"{cost.rows:,}",
            target=f"{cost.target_rows:,}",
        )
        lines.append("    " + shown)
    return lines


def _clients_ratio(clients: int, ratio: float) -> str:
    """One entry of a ratio line: "1 client: 0.50" or "16 clients: 0.38"."""
    if clients == 1:
        return _("{count} client: {ratio}").format(count=clients, ratio=f"{ratio:.2f}")
    return _("{count} clients: {ratio}").format(count=clients, ratio=f"{ratio:.2f}")


def _ratio_lines(report: BenchReport) -> list[str]:
    ratios = report.ratios()
    lines = []
    for name, found in ratios.items():
        if not found:
            continue
        listed = _listed([_clients_ratio(n, r) for n, r in found.items()])
        lines.append(_("{ratio} throughput ratio: {listed}").format(ratio=name, listed=listed))
    for name, clients, target in TARGETS:
        value = ratios.get(name, {}).get(clients)
        if value is None:
            continue
        if value >= target:
            line = _("target {ratio} >= {target} at {clients} client(s): met")
        else:
            line = _("target {ratio} >= {target} at {clients} client(s): NOT met")
        judged = line.format(ratio=name, target=target, clients=clients)
        lines.append(judged)
    return lines
