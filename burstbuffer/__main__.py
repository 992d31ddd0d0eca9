"""`python -m burstbuffer`: the `burstbuffer` command."""
import sys

from .cli import main

sys.exit(main())
