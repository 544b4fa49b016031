"""Limits and quotas: the token-bucket rate limiter (`rate_limit`), the per-client limits of
each deployment profile (`client_limits`), the store the processes count in together
(`limit_store`, `limit_tables`), slow work in turns by client (`fair_slots`) and the open
sessions within each client's quota (`session_quota`)."""
