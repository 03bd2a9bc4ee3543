"""``python -m srcad``: the command line (see ``srcad.cli``)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
