"""The package's exception types."""


class TileFoundryError(RuntimeError):
    """A failed TileFoundry call.

    ``status`` is the C ABI status name (``"TF_ERR_TYPE"``, ...), ``message``
    the library's message for it (``tf_last_error()``). A RuntimeError so that
    code catching torch's errors catches ours too.
    """

    def __init__(self, status: str, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


class AbiMismatchError(ImportError):
    """The shared library found is not one this package can use: its C ABI
    major differs, or its minor is older than the bindings'. Raised when the
    package is imported."""
