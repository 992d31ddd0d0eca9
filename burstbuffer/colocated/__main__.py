"""``python -m burstbuffer.colocated``: the child of `burstbuffer run` (`burstbuffer.colocated.child`)."""
import sys

from burstbuffer.colocated.child import main

sys.exit(main())
