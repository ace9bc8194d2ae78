"""The corpus tool group."""

from hermes.hookspecs import hookimpl


@hookimpl
def hermes_register_tools():
    return []
