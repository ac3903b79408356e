"""Peak memory of a fresh interpreter (Linux ``/proc``), for the tests that bound it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from support import ROOT


def peak_rss_mb(code: str) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter; (its stdout, its peak RSS in MB).
    The peak is the kernel's VmHWM of the new process image (getrusage's
    ru_maxrss would carry over the forking test process's own peak)."""
    probe = textwrap.dedent(code) + (
        "\nimport re, sys\n"
        "status = open('/proc/self/status').read()\n"
        "sys.stdout.write('\\nPEAK ' + re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr
    out, _, peak = done.stdout.rpartition("\nPEAK ")
    return out, int(peak) / 1024
