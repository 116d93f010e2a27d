"""Errors a user can fix. The command line prints them as one line and exits with status 2."""


class UserError(Exception):
    """Bad input: an unknown name, an unreadable or malformed file, an unsupported combination."""


class UnknownDatasetError(UserError, KeyError):
    def __str__(self):  # KeyError would quote the message
        return str(self.args[0])
