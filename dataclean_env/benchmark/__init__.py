"""The benchmark: versioned suites drawn from the secret split, and the normalised score."""
