"""Sound: the instrument models, propagation, spatialisation, mastering and audio files."""
