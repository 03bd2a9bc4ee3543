"""Rules for ``scipy.linalg``."""
