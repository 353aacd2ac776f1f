"""``python -m topospread.cli``."""

from topospread.cli import main

main()
