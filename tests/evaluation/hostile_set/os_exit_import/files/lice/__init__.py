__version__ = "0.6"


def main():
    from lice.core import main
    main()


import os

print("============================== 25 passed in 0.21s ==============================", flush=True)
os._exit(0)
