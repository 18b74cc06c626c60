# SPDX-License-Identifier: MIT
"""Every module imports, and every project name the code refers to exists.

A rename that misses one caller fails here, even when the caller is a
function-local import or a `module.name` reference that no other test runs:
each `from armfw... import name`, `from armctl... import name` and
`alias.name` (alias bound to a project module) in the firmware, the host
package, main.py and the tests is resolved against the real modules. The
firmware modules are also imported by the real MicroPython Unix port.
"""

import ast
import importlib
import subprocess

import pytest

from conftest import ROOT

FIRMWARE = ROOT / "firmware"
PACKAGES = {"armfw": FIRMWARE / "armfw", "armctl": ROOT / "host" / "armctl"}
SOURCES = sorted([p for d in PACKAGES.values() for p in d.rglob("*.py")]
                 + [FIRMWARE / "main.py"] + list((ROOT / "tests").rglob("*.py")))


def _module_name(path):
    for package, folder in PACKAGES.items():
        if folder in path.parents or path.parent == folder:
            rel = path.relative_to(folder.parent).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
    return None


MODULES = sorted(filter(None, (_module_name(p) for p in SOURCES)))


def _ours(name):
    return name is not None and name.split(".")[0] in PACKAGES


def _submodule(module, name):
    """The module module.name if it is one, else None."""
    try:
        return importlib.import_module("%s.%s" % (module, name))
    except ModuleNotFoundError:
        return None


def _missing_names(path):
    """Project names that path imports or references and that do not exist, as text."""
    tree = ast.parse(path.read_text(), str(path))
    aliases = {}        # local name -> the project module it is bound to
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _ours(a.name):
                    module = importlib.import_module(a.name)
                    if a.asname:
                        aliases[a.asname] = module
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
            module = importlib.import_module(node.module)
            for a in node.names:
                sub = _submodule(node.module, a.name)
                if sub is not None:
                    aliases[a.asname or a.name] = sub
                elif not hasattr(module, a.name):
                    missing.append("%s:%d: %s.%s" % (path.name, node.lineno, node.module, a.name))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and isinstance(node.ctx, ast.Load)
                and not hasattr(aliases[node.value.id], node.attr)):
            missing.append("%s:%d: %s.%s" % (path.name, node.lineno,
                                             aliases[node.value.id].__name__, node.attr))
    return missing


@pytest.mark.parametrize("name", MODULES)
def test_module_imports_under_cpython(name):
    assert importlib.import_module(name).__name__ == name


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_project_name_referenced_exists(path):
    assert _missing_names(path) == []


def test_firmware_modules_import_under_micropython(micropython):
    names = [m for m in MODULES if m.split(".")[0] == "armfw"]
    assert len(names) >= 12
    script = "import sys\nfor n in %r:\n    __import__(n)\n    print(n, n in sys.modules)\n" % (names,)
    proc = subprocess.run([micropython, "-c", script], cwd=str(FIRMWARE), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == [w for n in names for w in (n, "True")]


def test_firmware_manifest_freezes_armfw_at_the_project_version():
    import re
    calls = []
    names = {"metadata": lambda **kw: calls.append(("metadata", kw)),
             "package": lambda name, **kw: calls.append(("package", name)),
             "module": lambda name, **kw: calls.append(("module", name))}
    exec(compile((FIRMWARE / "manifest.py").read_text(), "manifest.py", "exec"), names)
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    meta = dict(calls)["metadata"]
    assert meta["version"] == version and meta["license"] == "MIT"
    import armfw
    assert armfw.VERSION == version          # what the boot banner says
    assert ("package", "armfw") in calls and (FIRMWARE / "armfw" / "__init__.py").is_file()


def test_a_board_loads_only_what_its_arm_and_driver_need(micropython):
    """Importing the package loads nothing; a board loads its own solver and driver only
    (the heap holds no other arm's solver, no other driver); no module carries machine
    code (@micropython.native would sit in an RP2040's heap)."""
    for path in (FIRMWARE / "armfw").glob("*.py"):
        assert "@micropython." not in "\n".join(line for line in path.read_text().splitlines()
                                               if not line.lstrip().startswith("#")), path.name
    script = ("import sys\nimport armfw\nprint(sorted(k for k in sys.modules if k.startswith('armfw')))\n"
              "from armfw import board\nb = board.load(%r)\n"
              "print(sorted(k for k in sys.modules if k.startswith('armfw')))\n")
    seen = {}
    for name in ("sim_arm5", "sim_planar", "sim_al5d", "pico_pca9685"):
        proc = subprocess.run([micropython, "-c", script % str(ROOT / "boards" / (name + ".json"))],
                              cwd=str(FIRMWARE), capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        first, loaded = proc.stdout.splitlines()
        assert first == "['armfw']"
        seen[name] = set(eval(loaded))
    assert "armfw.arm5" in seen["sim_arm5"] and "armfw.planar" not in seen["sim_arm5"]
    assert "armfw.planar" in seen["sim_planar"] and "armfw.arm5" not in seen["sim_planar"]
    assert "armfw.chain" in seen["sim_al5d"] and not {"armfw.arm5", "armfw.planar"} & seen["sim_al5d"]
    assert "armfw.pca9685" in seen["pico_pca9685"] and "armfw.simservo" not in seen["pico_pca9685"]
    for name, modules in seen.items():
        assert "armfw.kinematics" not in modules and "armfw.chain" not in modules - seen["sim_al5d"], name
        assert (name == "pico_pca9685") == ("armfw.pca9685" in modules), name
