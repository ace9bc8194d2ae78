"""Text as hermes reads it and shows it: LaTeX in feed text (:mod:`.latex`), the language
of a text and the words that name no topic (:mod:`.language`), authors' names
(:mod:`.authors`), the one spelling of a tag (:mod:`.tags`), and shortening what is shown
(:mod:`.clip`)."""
