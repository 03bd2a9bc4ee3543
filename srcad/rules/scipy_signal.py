"""Rules for ``scipy.signal``."""
