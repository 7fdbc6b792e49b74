from conan.errors import ConanInvalidConfiguration


def check_min_cppstd(conanfile, cppstd):
    current = conanfile.settings.compiler.get_safe("cppstd")
    if current is not None and int(str(current).replace("gnu", "")) < int(cppstd):
        raise ConanInvalidConfiguration(f"needs C++{cppstd}, the profile has {current}")


def can_run(conanfile):
    return True
