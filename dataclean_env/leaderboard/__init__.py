"""The leaderboard: runs on a secret split, played blind, scored and recorded by the server.

Modules: `tables` (the database schema), `db` (engines and migrations), `secret` (the
server secret that seeds the secret split), `ranked` (a leaderboard episode), `service`
(runs, records, submissions), `board` (ranking), `limits` (rate limits), `audit` (replay
stored runs). SQLAlchemy is imported only by `db`/`tables`, on first use.
"""
