"""Training-only code (synthetic data, model fitting); inference never imports it."""
