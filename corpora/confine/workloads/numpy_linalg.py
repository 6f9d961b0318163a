"""A numeric skill: solve a linear system and an FFT with numpy, answer JSON."""
import json
import sys

import numpy as np

request = json.load(sys.stdin)
n = int(request.get("n", 64))
rng = np.random.default_rng(7)
a = rng.standard_normal((n, n)) + n * np.eye(n)
b = rng.standard_normal(n)
x = np.linalg.solve(a, b)
spectrum = np.abs(np.fft.rfft(x))
print(json.dumps({"residual": float(np.linalg.norm(a @ x - b)), "peak": float(spectrum.max())}))
