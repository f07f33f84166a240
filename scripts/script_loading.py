"""Loading another script of this folder as a module: their names have dashes, so `import` cannot."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_script(name):
    """scripts/<name>.py as a module; no __pycache__ left behind."""
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
