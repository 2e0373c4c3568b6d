"""``python -m vitalrag``: the command line."""

from vitalrag.cli import main

main()
