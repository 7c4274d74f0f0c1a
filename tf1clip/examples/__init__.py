"""TF 1.x ``tensorflow.examples`` namespace, provided by tf1clip."""
