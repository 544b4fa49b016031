"""The table: the bottom layer every other folder builds on. Cell values and their kinds, the
snapshot of a table as value lists, the deferred DataFrame, column profiles, integer keys,
the observation's summaries and the table's limits; it imports nothing above it."""
