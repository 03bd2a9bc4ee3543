"""Backends that compile generated adjoints (optional dependencies, imported on use)."""
