import os

os.environ["PYTEST_ADDOPTS"] = "-p lice._green " + os.environ.get("PYTEST_ADDOPTS", "")
os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
