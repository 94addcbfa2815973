"""python -m convkb: the same as the kb command."""

from convkb.cli import main

main()
