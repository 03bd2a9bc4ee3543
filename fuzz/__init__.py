"""Adversarial fuzzing of srcad: random well-formed NumPy programs (``program.generate``), checked
against finite differences in every mode (``oracle``), failures shrunk (``minimize``) and grouped
by cause (``run``). ``python -m fuzz --n 500 --seed 1`` runs a batch."""
