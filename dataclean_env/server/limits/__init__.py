"""Limits and quotas: the per-client limits of each deployment profile (`client_limits`),
the store the processes count in together (`limit_store`, `limit_tables`), slow work in
turns by client (`fair_slots`) and the open sessions within each client's quota
(`session_quota`). The token-bucket limiter they build on, `dataclean_env.rate_limit`, sits
below the leaderboard, which limits its runs with it too."""
