"""TF 1.x ``tensorflow.examples.tutorials.mnist`` package; see ``input_data``."""
