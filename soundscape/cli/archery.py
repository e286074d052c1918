"""``soundscape archery``: simulate the shooting rounds and write their results."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from soundscape import archery
from soundscape.site import load_site

__all__ = ["command"]

# Seconds between one round's last arrow and the next round's start (取矢, 請射,
# 拾取矢 …): a stand-in for the sequencer's ritual clock when run alone.
_BETWEEN_ROUNDS_S = 300.0


@click.command("archery")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("output/archery"), show_default=True,
              help="Folder for round<N>.json and round<N>.csv.")
def command(seed: int, out_dir: Path) -> None:
    """Simulate 誘射 and the three rounds with the default participants; write one JSON
    and one CSV per round and print the tally announcements."""
    config = archery.load_config()
    site = load_site()
    rng = np.random.default_rng(seed)
    roster = archery.build_roster(config=config, rng=rng)
    start = 0.0
    for round_no in range(4):
        jie = None
        if round_no == 3:
            jie = archery.even_jie_times(start, len(roster), config=config)
        result = archery.simulate_round(round_no, archers=roster, jie_times=jie, site=site,
                                        rng=rng, config=config, start=start)
        json_path, _ = archery.write_results(result, out_dir)
        hits = sum(s.called for s in result.shots)
        counted = sum(s.counted for s in result.shots)
        line = (f"{round_no} {result.name}: {len(result.shots)} arrows, {hits} 獲, "
                f"{counted} 釋獲")
        if result.right is not None and result.left is not None:
            line += (f"; 右 {result.right.total} 算, 左 {result.left.total} 算: "
                     f"{result.announcement}")
        click.echo(line)
        start = result.end + _BETWEEN_ROUNDS_S
    click.echo(f"results in {json_path.parent}")
