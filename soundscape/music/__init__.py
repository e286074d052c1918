"""Music as data: pitch, the 律 tunings, the repertoire, arrangements, instrument files."""
