"""hermes: a self-hosted personal feed engine for researchers."""

__version__ = "0.1.0"
