"""TF 1.x ``tensorflow.examples.tutorials`` namespace, provided by tf1clip."""
