"""The one exception type of the package."""


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
