"""Storage: opening the database (:mod:`.db`), write transactions and their errors
(:mod:`.transactions`), the migration ledger (:mod:`.migrations`) and the one signal write
path (:mod:`.signals`)."""
