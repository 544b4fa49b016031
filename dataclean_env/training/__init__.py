"""Training integrations. `trl_env` (TRL's `environment_factory`) needs nothing beyond this
package; `trl_trainer` imports TRL and lives in the training venv only (see README)."""
