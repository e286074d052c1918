"""The rite on one clock: the planner, the timeline of steps, the players, the archery.

The planner is the package's face (``from soundscape.sequence import perform_from_file``),
imported when one of its names is first asked for: a render of a rite sequenced before
(``sequence.cache``) reads the cache through this package and needs none of the sequencer's
modules (a third of the CPU of such a start went to importing them)."""

__all__ = ["SequenceOptions", "perform", "perform_from_file"]  # the planner's own __all__


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from soundscape.sequence import planner

    value = getattr(planner, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
