# A step that empties the clean table, then hangs: the demo kills it with `kill -9`
# while it runs. Nothing of it reaches the log, so the next step starts from the
# recorded state.
import time

open("data/clean.csv", "w").close()
time.sleep(600)
