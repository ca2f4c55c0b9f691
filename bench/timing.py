"""The benches' shared clock: the best of a few timed calls (the least disturbed by other load)."""

import time


def best_of(run, repeats: int = 3) -> float:
    """The shortest wall time of `repeats` calls of `run()`, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)
