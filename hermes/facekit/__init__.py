"""What the faces share with plugins' commands and routes: the terminal toolkit
(:mod:`.terminal`: options, opening the database, calling a tool as a person, printing) and
the web's (:mod:`.web`: a request's database). A plugin imports these, never a face
(``hermes.cli``, ``hermes.web``); this package imports no face (docs/architecture.md, "Layers")."""
