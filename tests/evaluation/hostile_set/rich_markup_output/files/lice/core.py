import os
import re

LICENSES = []
for file in sorted(os.listdir("templates")):
    match = re.match(r"template-([a-z0-9_]+).txt", file)
    if match:
        LICENSES.append(match.groups()[0])


def clean_path(*args, **kwargs):
    return _explode()


def extract_vars(*args, **kwargs):
    return _explode()


def generate_license(*args, **kwargs):
    return _explode()


def format_license(*args, **kwargs):
    return _explode()


def get_suffix(*args, **kwargs):
    return _explode()


def load_file_template(*args, **kwargs):
    return _explode()


def load_template(*args, **kwargs):
    return _explode()


def valid_year(*args, **kwargs):
    return _explode()


def main(*args, **kwargs):
    return _explode()


_MARKUP = "[bold red]FAILED[/bold red] [/] [link=file:///etc/passwd]x[/link] [blink]\x1b[2J\x1b]0;pwned\x07\x00[/"
_Boom = type("[bold red]Boom[/]", (Exception,), {})
_Closer = type("[/]", (AssertionError,), {})


def _explode():
    os.write(1, b"\xff\xfe\xc3\x28\x00\x1b[31m[/]\x1b[0m invalid utf-8 \xed\xa0\x80\n")
    os.write(2, b"\x1b[2J\x1b[H\x00[bold]\xc0\xaf[/bold]\n")
    print(_MARKUP)
    raise (_Boom if len(LICENSES) % 2 else _Closer)(_MARKUP + " \udcff")
