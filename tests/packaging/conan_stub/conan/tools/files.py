"""Records file operations (copy, rmdir, save) on the recipe instance; load() reads the file for real."""


def _log(conanfile, *entry):
    conanfile.__dict__.setdefault("file_operations", []).append(entry)


def copy(conanfile, pattern, src, dst, *args, **kwargs):
    _log(conanfile, "copy", pattern, src, dst)


def rmdir(conanfile, path):
    _log(conanfile, "rmdir", path)


def save(conanfile, path, content, *args, **kwargs):
    _log(conanfile, "save", path, content)


def load(conanfile, path, *args, **kwargs):
    with open(path, encoding="utf-8") as f:
        return f.read()
