"""What a Performance becomes for other tools: MIDI, MTS, Scala, MusicXML, pictures."""
