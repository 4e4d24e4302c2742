import os
import sys

os.write(1, b"[/] [bold red]install[/bold red] [link=http://x]\x1b]0;pwned\x07\x1b[2J\xff\xfe\n")
os.write(2, b"[/] \x00 [/bold]\xc3\x28\n")
raise type("[/]", (Exception,), {})("[bold][/] \x1b[31mred\x1b[0m")
