"""Where untrusted work runs: worker processes under a memory cap, ended past their time
(`pool`), and the DuckDB jobs of the SQL operations that run in them (`sql_jobs`)."""
