"""python -m ledger_book FILE: the balance and the total per category."""
import sys


def main(argv):
    pass


if __name__ == "__main__":
    main(sys.argv[1:])
