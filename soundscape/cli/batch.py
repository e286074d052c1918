"""``soundscape batch PLAN.toml``: many renders (tuning, reading, listener, layout
hypotheses) in parallel on a local process pool or a Dask cluster; same bytes whatever
the executor.
"""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import FilePath, WholeRange, counted, court_option

__all__ = ["command"]


@click.command("batch")
@click.argument("plan", type=FilePath(exists=True, dir_okay=False, path_type=Path))
@click.option("--executor", default="local", show_default=True,
              help="local (a process pool), serial, or dask://HOST:PORT (a Dask scheduler; "
              "pip install 'soundscape[dask]').")
@click.option("--jobs", type=WholeRange(1, 64), default=2, show_default=True,
              help="Processes of the local pool.")
@court_option
def command(plan: Path, executor: str, jobs: int, court: str) -> None:
    """Render every [[render]] of a batch plan (format: docs/kit.md)."""
    from soundscape.kit.batch import run_jobs
    from soundscape.kit.manifest import check_court
    from soundscape.kit.plan import check_parts, load_plan
    from soundscape.site.courtyard import load_site

    check_court(court)
    out, work = load_plan(plan, load_site(), court=court)
    check_parts(plan, work)
    click.echo(f"{counted(len(work), 'render')} into {out} ({executor})", err=True)
    results = run_jobs(work, executor=executor, workers=jobs,
                       progress=lambda job: click.echo(f"  done {job.name}", err=True))
    for result in results:
        for path in result.files:
            click.echo(f"wrote {path} ({result.seconds:.1f} s, "
                       f"{result.report.output_lufs:.1f} LUFS)")
