"""Hatch build hook: compile the protobuf binding's optional C path (``agui.wire._proto_fast``).

A wheel (and an editable install) gets ``agui/wire/_proto_fast*.so`` when a C compiler and the
Python headers are there; when they are not, or the compile fails, the build goes on without it
and the package is pure Python (``agui.wire._proto`` then takes its Python path, with the same
results). ``AGUI_PURE_BUILD=1`` skips the compile; ``$CC`` / ``$LDSHARED`` pick the compiler. ``python hatch_build.py`` builds it in place
(a checkout used through ``PYTHONPATH``).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

SOURCE = Path("agui") / "wire" / "_proto_fast.c"
TABLES = Path("generated") / "agui_generated"


def source_digest(source: Path, tables: Path) -> str:
    """The digest a build records of the C source and the tables it compiled
    (``agui.wire._proto`` computes the same over the files beside the module: a module built
    from other files is not used)."""
    return hashlib.sha256(source.read_bytes() + tables.read_bytes()).hexdigest()[:16]


def build_extension(root: Path) -> Path | None:
    """Compile ``agui/wire/_proto_fast.c`` in place under ``root``; the module's path, or None
    (with a note on stderr) when it cannot be built here."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    # $CC / $LDSHARED override the interpreter's build settings, as for any C extension
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC")
    ldshared = os.environ.get("LDSHARED") or sysconfig.get_config_var("LDSHARED")
    include = sysconfig.get_paths().get("include")
    if sys.platform == "win32" or not (suffix and cc and ldshared and include):
        _note("no C toolchain configured for this Python")
        return None
    if not Path(include, "Python.h").is_file():
        _note(f"no Python.h in {include}")
        return None
    out = root / SOURCE.with_name("_proto_fast" + suffix)
    flags = shlex.split(sysconfig.get_config_var("CCSHARED") or "")
    with tempfile.TemporaryDirectory(prefix="agui-build-") as tmp:
        obj = Path(tmp) / "_proto_fast.o"
        compile_cmd = [
            *shlex.split(cc),
            *flags,
            "-O2",
            "-fno-strict-aliasing",
            f'-DSOURCE_DIGEST="{source_digest(root / SOURCE, root / TABLES / "agui_pb_tables.h")}"',
            f"-I{include}",
            f"-I{root / TABLES}",
            "-c",
            str(root / SOURCE),
            "-o",
            str(obj),
        ]
        linked = Path(tmp) / out.name  # then moved in place: a process using the old one keeps it
        link_cmd = [*shlex.split(ldshared), str(obj), "-o", str(linked)]
        for cmd in (compile_cmd, link_cmd):
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            except OSError as exc:
                _note(f"{cmd[0]}: {exc}")
                return None
            if done.returncode != 0:
                _note(f"{shlex.join(cmd)} failed:\n{done.stderr[-2000:]}")
                return None
        tmp_out = out.with_name(out.name + ".tmp")
        shutil.copyfile(linked, tmp_out)
        os.replace(tmp_out, out)
    return out


def _note(text: str) -> None:
    print(
        f"agui-sdk: the compiled protobuf path is not built ({text}); pure Python", file=sys.stderr
    )


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script outside a build
    BuildHookInterface = object  # type: ignore[assignment,misc]


class CustomBuildHook(BuildHookInterface):  # type: ignore[misc,valid-type]
    """Adds the compiled module to the wheel (a platform wheel then) when it builds."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile before the wheel's files are collected (see the module doc)."""
        if self.target_name != "wheel" or os.environ.get("AGUI_PURE_BUILD"):
            return
        out = build_extension(Path(self.root))
        if out is None:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":  # an editable install reads the module in place
            build_data["force_include"][str(out)] = str(SOURCE.with_name(out.name))


if __name__ == "__main__":
    built = build_extension(Path(__file__).resolve().parent)
    print(built if built is not None else "not built")
    sys.exit(0 if built is not None else 1)
