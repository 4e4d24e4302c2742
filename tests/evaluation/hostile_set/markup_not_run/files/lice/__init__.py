__version__ = "0.6"


def main():
    from lice.core import main
    main()


import os

os.write(1, b"[/] [bold red]no tests[/bold red] [link=http://x]\x1b]0;pwned\x07\x1b[2J\xff\xfe\n")
os.write(2, b"[/] \x00 [/bold]\xc3\x28\n")
os._exit(3)
