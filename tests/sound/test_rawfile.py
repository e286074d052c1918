"""Pass 1's raw file: silent columns are not stored, and every range reads back as written."""

from __future__ import annotations

import numpy as np
import pytest

from soundscape.sound import rawfile


def _blocks() -> list[np.ndarray]:
    """Blocks of 6 columns, unequal lengths: columns silent in some blocks, one sounding only
    in its last frame, one all silent, a NaN, a column of −0, a block with nothing sounding
    at all, a long block (its columns placed back a stretch of frames at a time)."""
    rng = np.random.default_rng(3)
    blocks = []
    for index, frames in enumerate([700, 1000, 1000, 333, 1000, 1, 5000]):
        block = rng.standard_normal((frames, 6)).astype(np.float32)
        block[:, 5] = 0.0  # never sounds
        if index % 2:
            block[:, 1:3] = 0.0  # two columns side by side silent
        if index == 2:
            block[:-1, 4] = 0.0  # sounds only in its last frame: past the first frames' look
            block[10, 0] = np.nan
        if index == 1:
            block[:, 3] = -0.0  # not silent: its sign bit must come back
        if index == 3:
            block[:] = 0.0
        if index == 6:
            block[:, [0, 2]] = 0.0  # silent columns apart
        blocks.append(block)
    return blocks


def _written(tmp_path) -> tuple[np.ndarray, rawfile.Layout]:
    blocks = _blocks()
    with rawfile.RawWriter(tmp_path / "raw.f32") as writer:
        for block in blocks:
            writer.write(block)
    return np.concatenate(blocks), writer.layout()


def test_only_the_sounding_columns_are_stored(tmp_path):
    signal, layout = _written(tmp_path)
    blocks = _blocks()
    sounding = [np.any(b.view(np.uint32), axis=0) for b in blocks]
    # one silent column of six (blocks 0, 2 and 4) is kept as it is: under a quarter
    stored = [c if (~c).sum() >= 6 / 4 else np.ones(6, bool) for c in sounding]
    assert [len(c) - c.sum() for c in sounding] == [1, 3, 1, 6, 1, 3, 3]
    assert np.array_equal(layout.columns, stored)
    assert layout.columns[1, 3] and layout.columns[0].all() and layout.columns[4].all()
    assert not layout.columns[[1, 3, 5], 5].any() and not layout.columns[3].any()
    size = sum(4 * len(b) * int(s.sum()) for b, s in zip(blocks, stored, strict=True))
    assert size < signal.nbytes * 0.8
    assert (tmp_path / "raw.f32").stat().st_size == size == layout.offsets[-1]
    assert layout.frames == len(signal) and layout.width == 6


@pytest.mark.parametrize("start, stop", [(0, 4034), (0, 1), (650, 1750), (699, 700),
                                         (2699, 3034), (3030, 4034), (4033, 4034), (1000, 2700),
                                         (4034, 9034), (4000, 6100), (6000, 9034)])
def test_every_range_reads_back_as_written(tmp_path, start, stop):
    signal, layout = _written(tmp_path)
    got = rawfile.read(tmp_path / "raw.f32", layout, start, stop)
    assert got.dtype == np.float32 and got.shape == (stop - start, 6)
    assert got.tobytes() == signal[start:stop].tobytes()  # every bit: NaN, −0, +0


@pytest.mark.parametrize("size", [1, 999, 1000, 4096])
def test_chunks_read_the_whole_file_in_order(tmp_path, size):
    signal, layout = _written(tmp_path)
    got = list(rawfile.chunks(tmp_path / "raw.f32", layout, size))
    assert [start for start, _ in got] == list(range(0, len(signal), size))
    assert np.concatenate([chunk for _, chunk in got]).tobytes() == signal.tobytes()


@pytest.mark.parametrize("silent", [[], [3]])
def test_a_file_whose_columns_all_sound_or_all_but_its_lfe_is_stored_as_it_is(tmp_path,
                                                                             silent):
    """Stereo's columns all sound; a 5.1 render's LFE is silent, one column in six: not
    worth the copies of leaving it out."""
    signal = np.random.default_rng(1).standard_normal((5000, 6)).astype(np.float32)
    signal[:, silent] = 0.0
    with rawfile.RawWriter(tmp_path / "raw.f32") as writer:
        for at in range(0, len(signal), 1024):
            writer.write(signal[at:at + 1024])
    assert (tmp_path / "raw.f32").read_bytes() == signal.astype("<f4").tobytes()


def test_a_block_of_another_width_is_refused_by_name(tmp_path):
    with rawfile.RawWriter(tmp_path / "raw.f32") as writer:
        writer.write(np.ones((4, 3), dtype=np.float32))
        with pytest.raises(ValueError, match=r"raw\.f32: a block of 2 columns after blocks of 3"):
            writer.write(np.ones((4, 2), dtype=np.float32))


@pytest.mark.parametrize("stored", [
    [*range(12, 18), *range(24, 33)],  # runs side by side: placed a run at a time
    [0, *range(5, 9), 32],  # runs at both edges
    list(range(0, 33, 2)),  # every other: placed by one index
    [7],
    list(range(33)),
])
def test_stored_columns_go_back_to_their_places_run_by_run_or_one_by_one(tmp_path, stored):
    """An Atmos master's 33 columns: a block written and read back is the block, whatever
    the runs of its sounding columns, over more frames than are placed at a time."""
    columns = np.zeros(33, bool)
    columns[stored] = True
    block = np.zeros((3 * 2048 + 5, 33), dtype=np.float32)
    block[:, columns] = np.random.default_rng(len(stored)).standard_normal(
        (len(block), len(stored))).astype(np.float32)
    with rawfile.RawWriter(tmp_path / "raw.f32") as writer:
        writer.write(block)
    layout = writer.layout()
    assert np.array_equal(layout.columns[0], columns if len(stored) < 33 else np.ones(33, bool))
    got = rawfile.read(tmp_path / "raw.f32", layout, 0, len(block))
    assert got.tobytes() == block.tobytes()
    assert rawfile.read(tmp_path / "raw.f32", layout, 2040, 4100).tobytes() == \
        block[2040:4100].tobytes()
