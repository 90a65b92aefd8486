"""The version of sdckit (read by the build, shown by the command line and the report)."""

__version__ = "0.1.0"
