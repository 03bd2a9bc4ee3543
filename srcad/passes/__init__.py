"""The compiler's passes, one module each; ``srcad.pipeline`` lists them in order."""
