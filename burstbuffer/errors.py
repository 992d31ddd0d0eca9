"""The one error type the user sees: a one-line message naming the file, the item and the reason."""


class InputError(Exception):
    """Bad input (workload, platform, option).

    str(err) is one line: ``FILE: ITEM: REASON``. The CLI prints it and exits with status 2.
    """

    def __init__(self, source: str, item: str, reason: str):
        self.source, self.item, self.reason = str(source), str(item), str(reason)
        super().__init__(f"{self.source}: {self.item}: {self.reason}")

    def __reduce__(self):   # pickled by its three parts (a run's child reports it to the parent)
        return (type(self), (self.source, self.item, self.reason))
