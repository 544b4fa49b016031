"""The engine: an episode, its table (snapshot, values, deferred DataFrame), its limits and
observation, the step memory, and the doors every caller goes through."""
