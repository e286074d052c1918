from soundscape.cli import main

main()
