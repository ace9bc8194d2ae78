"""The core's default plugins, registered through the plugin manager exactly like any other
plugin: the ``click`` signal kind, the embedder, the candidate filters and the scorers."""
