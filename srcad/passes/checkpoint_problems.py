"""What a checkpointed loop may not do, said as ``Problem``s (what it changes that no snapshot
holds, and what to write instead), and the advice they give (``checkpoint_state``,
``checkpoint_helpers``)."""

PLAIN_LOOP = "or use a plain loop (drop srcad.checkpointed)"
DRAW_BEFORE = ("draw the numbers before the loop (noise = rng.standard_normal((n, ...))) and index them in it "
                f"(noise[t]), {PLAIN_LOOP}")
BEFORE_THE_LOOP = f"compute what the loop needs from it before the loop, {PLAIN_LOOP}"
IN_A_VARIABLE = f"keep the value in a variable of the function and update it there, {PLAIN_LOOP}"
READ_BEFORE = ("read what the loop needs into a variable before the loop (W = self.W; rate = s.rate) and use "
                f"that in it, or pass it as an array, list or dict argument, {PLAIN_LOOP}")


class Problem(Exception):
    """State a call or a store may change that no snapshot holds: ``what`` (a clause naming
    it) and ``advice`` (what to write instead)."""

    def __init__(self, what, advice):
        super().__init__(what)
        self.what, self.advice = what, advice
