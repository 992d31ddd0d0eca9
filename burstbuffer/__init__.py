"""burstbuffer: burst-buffer-aware batch scheduling beside Batsim, with an embedded SimGrid simulator."""
__version__ = "0.1.0"
