"""hermes: a self-hosted personal feed engine for researchers."""

# The one place the version lives: pyproject.toml reads it, `hermes --version` prints it, and
# CHANGELOG.md has a heading for it.
__version__ = "0.1.0"
