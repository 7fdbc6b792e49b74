"""A stand-in for the parts of Conan 2 that cputrain's conanfile.py and test_package/conanfile.py use, so that
tests/packaging/check_recipes.py can run the recipe's methods without Conan (which this machine cannot install).
It records what the recipe asks for; it does not resolve, build or package anything."""


class _Values:
    """Options or settings: attribute access, get_safe(), and item access for dependency patterns."""

    def __init__(self, values=None):
        object.__setattr__(self, "_values", dict(values or {}))
        object.__setattr__(self, "_deps", {})

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"no option or setting '{name}'")
        return values[name]

    def __setattr__(self, name, value):
        object.__getattribute__(self, "_values")[name] = value

    def __contains__(self, name):
        return name in self._values

    def __getitem__(self, pattern):
        # self.options["openblas"].shared = True sets a dependency's option.
        return self._deps.setdefault(pattern, _Values())

    def get_safe(self, name, default=None):
        return self._values.get(name, default)

    def rm_safe(self, name):
        self._values.pop(name, None)


class _Component:
    """One cpp_info (the package's, or a component's): the fields a header-only recipe sets, and properties."""

    def __init__(self):
        self.properties = {}
        self.requires = []
        self.defines = []
        self.system_libs = []
        self.libs = []
        self.cxxflags = []
        self.bindirs = ["bin"]
        self.libdirs = ["lib"]
        self.includedirs = ["include"]

    def set_property(self, name, value):
        self.properties[name] = value

    def get_property(self, name):
        return self.properties.get(name)


class _Components(dict):
    """cpp_info.components: as in Conan, naming a component creates it (in the order first named)."""

    def __missing__(self, name):
        component = self[name] = _Component()
        return component


class _CppInfo(_Component):
    def __init__(self):
        super().__init__()
        self.components = _Components()


class _Info:
    def __init__(self):
        self.cleared = False

    def clear(self):
        self.cleared = True


class _Dependency:
    def __init__(self, options):
        self.options = _Values(options)


class ConanFile:
    """Each test builds one instance per configuration; the attributes below are what Conan would set."""

    name = None
    version = None

    def __init__(self, options=None, settings=None, dependencies=None, recipe_folder=None):
        merged = {k: v for k, v in (getattr(self, "default_options", None) or {}).items() if ":" not in k}
        merged.update(options or {})
        self.options = _Values(merged)
        self.settings = _Values(settings or {"os": "Linux", "arch": "x86_64", "compiler": "gcc",
                                              "build_type": "Release"})
        self.settings.compiler = _Values({"cppstd": (settings or {}).get("compiler.cppstd")})
        self.dependencies = {name: _Dependency(opts) for name, opts in (dependencies or {}).items()}
        self.cpp_info = _CppInfo()
        self.info = _Info()
        self.recipe_folder = recipe_folder
        self.export_sources_folder = "<export_sources>"
        self.source_folder = recipe_folder
        self.package_folder = "<package>"
        self.requirements_seen = []  # (reference, traits)
        self.ref = f"{self.name}/{self.version}"

    def requires(self, reference, **traits):
        self.requirements_seen.append((reference, traits))
