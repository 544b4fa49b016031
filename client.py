"""OpenEnv's layout: the typed client at the root. The code is `dataclean_env.client`."""

from dataclean_env.client import (
    CleaningAction,
    CleaningObservation,
    CleaningState,
    DataCleaningClient,
)

__all__ = ["CleaningAction", "CleaningObservation", "CleaningState", "DataCleaningClient"]
