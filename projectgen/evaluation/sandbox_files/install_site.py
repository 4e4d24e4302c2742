"""Copied into the sandbox as `sitecustomize.py` when a task has an install step.

The install step puts the candidate under a per-workspace prefix
(`$PROJECTGEN_INSTALL_PREFIX`), never into the shared test environment. A folder
on PYTHONPATH does not read `.pth` files, and editable installs are `.pth`
files, so its site-packages is added the way Python adds its own. Standard
library only: it runs in the task's environment, not ours.
"""
import glob
import os
import site

_prefix = os.environ.get("PROJECTGEN_INSTALL_PREFIX")
if _prefix:
    for _folder in sorted(glob.glob(os.path.join(_prefix, "lib*", "python*", "site-packages"))):
        site.addsitedir(_folder)
