"""The build backend of the amq Python package (PEP 517 and PEP 660), with
the standard library only: `pip install ./python` works offline, under
pip's build isolation, with no build package installed.

The wheel holds the pure-Python package python/amq and a generated
amq/_config.py saying where libamq is:

- when an installed libamq is found (pkg-config's amq.pc, then the system
  loader), the wheel is pure Python and _config.py records pkg-config's
  library directory, so a library in a non-system prefix is found without
  AMQ_LIBRARY or LD_LIBRARY_PATH;
- otherwise, when the package is built from a source checkout, the library
  is built from the tree (cmake, target amq_shared) and the wheel carries
  it as amq/libamq.so.0 (a platform wheel);
- otherwise the build stops and says what to install.

AMQ_PYTHON_BUNDLE=1 builds and bundles the library even when one is
installed; AMQ_PYTHON_BUNDLE=0 never does (the package then looks for the
library at import only).
"""

import base64
import csv
import ctypes.util
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: the few fields read are parsed by hand
    tomllib = None

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(HERE, "amq")
SOURCE_TREE = os.path.dirname(HERE)


# ---- facts -------------------------------------------------------------------


def _project():
    path = os.path.join(HERE, "pyproject.toml")
    with open(path, "rb") as f:
        data = f.read()
    if tomllib is not None:
        return tomllib.loads(data.decode())["project"]
    text = data.decode()
    out = {}
    for key in ("name", "description", "requires-python"):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % key, text, re.M)
        if m:
            out[key] = m.group(1)
    return out


def _pkg_config(*args):
    try:
        r = subprocess.run(["pkg-config"] + list(args) + ["amq"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _tree_version():
    path = os.path.join(SOURCE_TREE, "CMakeLists.txt")
    try:
        with open(path) as f:
            m = re.search(r"project\(amq\s+VERSION\s+([0-9.]+)", f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def _version():
    return _pkg_config("--modversion") or _tree_version() or "0.0.0"


def _installed_libdir():
    """pkg-config's libdir, or "" when the loader finds libamq itself, or
    None when no installed library is found."""
    libdir = _pkg_config("--variable=libdir")
    if libdir and os.path.exists(os.path.join(libdir, "libamq.so.0")):
        return os.path.normpath(libdir)
    if ctypes.util.find_library("amq"):
        return ""
    return None


def _want_bundle(libdir):
    flag = os.environ.get("AMQ_PYTHON_BUNDLE", "")
    if flag == "1":
        return True
    if flag == "0":
        return False
    return libdir is None


def _build_library(work):
    """libamq.so built from the source checkout into work/."""
    if not os.path.exists(os.path.join(SOURCE_TREE, "CMakeLists.txt")):
        raise RuntimeError("amq: no installed libamq was found (pkg-config "
                           "amq, the system loader) and this is not a "
                           "source checkout to build it from: install the "
                           "library first (`make install`)")
    build = os.path.join(work, "cmake")
    jobs = str(os.cpu_count() or 2)
    for cmd in (["cmake", "-S", SOURCE_TREE, "-B", build,
                 "-DCMAKE_BUILD_TYPE=Release"],
                ["cmake", "--build", build, "--target", "amq_shared",
                 "-j", jobs]):
        r = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
        if r.returncode != 0:
            raise RuntimeError("amq: building libamq from the source tree "
                               "failed: %s" % " ".join(cmd))
    for name in sorted(os.listdir(build)):
        path = os.path.join(build, name)
        if name.startswith("libamq.so.") and not os.path.islink(path):
            return path
    raise RuntimeError("amq: the library build made no libamq.so")


def _config_text(libdir):
    return ('"""Where libamq is, written when the package was built."""\n'
            "LIBDIR = %r\n" % (libdir or ""))


# ---- wheels ------------------------------------------------------------------


def _dist_name():
    return re.sub(r"[-_.]+", "_", _project().get("name", "amq"))


def _metadata(version):
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: %s" % p.get("name", "amq"),
             "Version: %s" % version]
    if p.get("description"):
        lines.append("Summary: %s" % p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    for c in p.get("classifiers", []):
        lines.append("Classifier: %s" % c)
    for extra, reqs in p.get("optional-dependencies", {}).items():
        lines.append("Provides-Extra: %s" % extra)
        for r in reqs:
            lines.append('Requires-Dist: %s; extra == "%s"' % (r, extra))
    readme = os.path.join(HERE, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme) as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _platform_tag():
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


class _Wheel:
    def __init__(self, path, dist_info):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []
        self.dist_info = dist_info

    def add(self, arcname, data, mode=0o644):
        if isinstance(data, str):
            data = data.encode()
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
        self.records.append((arcname, "sha256=" + digest.rstrip(b"=")
                             .decode(), str(len(data))))

    def close(self):
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        for r in self.records:
            w.writerow(r)
        w.writerow((self.dist_info + "/RECORD", "", ""))
        info = zipfile.ZipInfo(self.dist_info + "/RECORD",
                               date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, out.getvalue())
        self.zip.close()


def _package_files():
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                if name == "_config.py":
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, HERE).replace(os.sep, "/")
                yield path, rel


def _write_dist_info(wheel, version, tag):
    di = wheel.dist_info
    wheel.add(di + "/METADATA", _metadata(version))
    wheel.add(di + "/WHEEL", "Wheel-Version: 1.0\nGenerator: amq_build\n"
              "Root-Is-Purelib: %s\nTag: %s\n" %
              ("true" if tag.endswith("-any") else "false", tag))
    wheel.add(di + "/top_level.txt", "amq\n")


def _build(wheel_directory, editable):
    version = _version()
    libdir = _installed_libdir()
    bundle = _want_bundle(libdir) and not editable
    tag = "py3-none-" + (_platform_tag() if bundle else "any")
    name = "%s-%s-%s.whl" % (_dist_name(), version, tag)
    dist_info = "%s-%s.dist-info" % (_dist_name(), version)
    wheel = _Wheel(os.path.join(wheel_directory, name), dist_info)
    try:
        if editable:
            wheel.add("amq_editable.pth", HERE + "\n")
        else:
            for path, rel in _package_files():
                with open(path, "rb") as f:
                    wheel.add(rel, f.read())
            if bundle:
                work = tempfile.mkdtemp(prefix="amq-build-")
                try:
                    with open(_build_library(work), "rb") as f:
                        wheel.add("amq/libamq.so.0", f.read(), 0o755)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                wheel.add("amq/_config.py", _config_text(""))
            else:
                wheel.add("amq/_config.py", _config_text(libdir))
        _write_dist_info(wheel, version, tag)
    finally:
        wheel.close()
    return name


# ---- PEP 517 / PEP 660 hooks ---------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory,
                                     config_settings=None):
    version = _version()
    dist_info = "%s-%s.dist-info" % (_dist_name(), version)
    path = os.path.join(metadata_directory, dist_info)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w") as f:
        f.write(_metadata(version))
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _build(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    return _build(wheel_directory, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    version = _version()
    base = "%s-%s" % (_dist_name(), version)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ("pyproject.toml", "README.md", "_build/amq_build.py"):
            path = os.path.join(HERE, rel)
            if os.path.exists(path):
                tar.add(path, arcname=base + "/" + rel)
        for path, rel in _package_files():
            tar.add(path, arcname=base + "/" + rel)
        pkg_info = _metadata(version).encode()
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return name
