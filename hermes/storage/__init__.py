"""Storage: opening the database (:mod:`.db`), write transactions and their errors
(:mod:`.transactions`), the migration ledger (:mod:`.migrations`), the one signal write
path (:mod:`.signals`) and the clicks table, written and read (:mod:`.clicks`)."""
