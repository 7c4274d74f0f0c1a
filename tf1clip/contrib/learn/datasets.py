"""tf.contrib.learn.datasets: `mnist.read_data_sets` (tf1clip's local MNIST reader) and
`base.maybe_download`, which returns the file when it is already in `work_directory` and
otherwise stops with one line saying where to put it (tf1clip never downloads)."""
import os
import types



class DownloadRefused(FileNotFoundError):
    """The file maybe_download would fetch is not there; one line at the user's call."""

    tf1clip_unsupported = True


def maybe_download(filename, work_directory, source_url):
    os.makedirs(work_directory, exist_ok=True)
    filepath = os.path.join(work_directory, filename)
    if not os.path.exists(filepath):
        raise DownloadRefused(f"maybe_download: {filepath} is missing; tf1clip never downloads: fetch {source_url} "
                              f"into {work_directory} yourself")
    return filepath


def _mnist():
    from tf1clip.examples.tutorials.mnist import input_data

    return input_data


base = types.SimpleNamespace(maybe_download=maybe_download)


def __getattr__(name):
    if name == "mnist":
        return _mnist()
    raise AttributeError(name)
