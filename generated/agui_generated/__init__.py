"""Generated msgspec types for the AG-UI and A2UI protocols.

Written only by ``tools/codegen.py`` from ``schema/*.schema.json``: never edit by hand, run
``nox -s regen``. Import the public AG-UI names from ``agui.types`` instead of from here.

One module per schema: ``a2ui_v08``, ``a2ui_v09``, ``a2ui_v09_1``, ``a2ui_v10``, ``agui``, ``agui_callbacks``, ``agui_pb2``, ``agui_pb_convert``, ``agui_pb_fast``.
"""
