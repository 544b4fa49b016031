"""The episode store: the bounded store of episodes every door shares (`episode_store`) and
the one rule for what a door may show of a blind episode (`reward_visibility`)."""
