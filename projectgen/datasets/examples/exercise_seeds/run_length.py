"""Seed: squeeze repeated bytes of a log line (written for projectgen's bundled seed set)."""


def squeeze(line):
    out = []
    for ch in line:
        if out and out[-1][0] == ch:
            out[-1][1] += 1
        else:
            out.append([ch, 1])
    return "".join(f"{n}{c}" if n > 1 else c for c, n in out)
