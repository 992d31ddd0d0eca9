"""``python -m burstbuffer.simulator``: same options as ``burstbuffer simulate`` (see cli.py)."""
import sys

from .cli import main

sys.exit(main())
