"""The engine: an episode and its step, the step memory, and the doors every caller goes
through. It runs operations on the table (`dataclean_env.table`) and grades them."""
