"""CMakeToolchain keeps the cache variables the recipe sets; CMake records configure/install; CMakeDeps and
cmake_layout only note that they were used."""


class CMakeToolchain:
    def __init__(self, conanfile):
        self._conanfile = conanfile
        self.cache_variables = {}
        self.variables = {}

    def generate(self):
        self._conanfile.__dict__["toolchain"] = self


class CMakeDeps:
    def __init__(self, conanfile):
        self._conanfile = conanfile

    def generate(self):
        self._conanfile.__dict__["cmakedeps_generated"] = True


class CMake:
    def __init__(self, conanfile):
        self._conanfile = conanfile

    def _log(self, step):
        self._conanfile.__dict__.setdefault("cmake_steps", []).append(step)

    def configure(self, *args, **kwargs):
        self._log("configure")

    def build(self, *args, **kwargs):
        self._log("build")

    def install(self, *args, **kwargs):
        self._log("install")


def cmake_layout(conanfile, *args, **kwargs):
    conanfile.__dict__["layout_used"] = "cmake_layout"
