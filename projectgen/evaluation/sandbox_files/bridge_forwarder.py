"""In the sandbox: loopback TCP to the model bridge's unix socket, for a system that knows only a base URL.

    python -I -S bridge_forwarder.py SOCKET PORT -- COMMAND...

A sandbox has no network but its own loopback (docs/sandbox.md); the bridge's socket, in a folder bound
read-only into the sandbox, is its one way out. This listens on 127.0.0.1:PORT, relays every connection's
bytes to and from SOCKET, starts COMMAND (its environment names http://127.0.0.1:PORT/v1 as its base URL)
and exits with COMMAND's status. It runs beside the system it serves and is trusted with nothing: the
system may kill or replace it and reach no more than the socket, where the bridge, on the host, decides.
Standard library only (it runs under ``-I -S``).
"""
import socket
import subprocess
import sys
import threading

CHUNK = 1 << 16


def pump(source, target):
    """Copy `source` to `target` until `source` ends, then end `target`'s writing side."""
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(client, upstream):
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def accept(listener, path):
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError as exc:
            sys.stderr.write("bridge forwarder: cannot reach the model bridge at %s: %s\n" % (path, exc))
            client.close()
            upstream.close()
            continue
        threading.Thread(target=relay, args=(client, upstream), daemon=True).start()


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: bridge_forwarder.py SOCKET PORT -- COMMAND...\n")
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.create_server(("127.0.0.1", port))
    threading.Thread(target=accept, args=(listener, path), daemon=True).start()
    try:
        status = subprocess.call(command)
    except OSError as exc:
        sys.stderr.write("bridge forwarder: cannot start %s: %s\n" % (command[0], exc))
        return 127
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
