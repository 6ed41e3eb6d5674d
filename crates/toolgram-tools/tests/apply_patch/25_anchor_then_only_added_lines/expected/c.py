def one():
    """The first."""
    return 1

def two():
    return 2
