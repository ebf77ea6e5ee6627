"""What the worker processes of `serve --workers N` share: imported once by the
forkserver they are forked from (cli.py), so each worker starts with every service's
modules imported and every model mapped instead of importing them all again."""

from __future__ import annotations

import importlib

from stackling import app

for _path, _prefix in app.COMPONENTS:
    importlib.import_module(_path)
app.map_models()
