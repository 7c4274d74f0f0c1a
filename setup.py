"""tf1clip: keep TF 1.x training scripts running on TF 2.21, migrate them, prove parity."""
from setuptools import find_packages, setup

setup(
    name="tf1clip",
    version="0.1.0",
    description="Migrate TensorFlow 1.x gradient-clipping training code to TensorFlow 2, with parity proofs",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["tf1clip", "tf1clip.*", "codemods", "codemods.*"]),
    include_package_data=True,
    # One stack that works together: tf-keras must match TensorFlow's minor version, or
    # tf.compat.v1.layers / rnn cells refuse to load under TF_USE_LEGACY_KERAS=1.
    install_requires=[
        "tensorflow==2.21.*",
        "tf-keras==2.21.*",
        "tf-slim==1.1.0",
        "libcst>=1.1,<2",
        "rich>=13",  # migrate's progress bar and coloured diff, parity's table (also a Keras 3 dependency)
        "numpy>=1.26",
        # TensorFlow asks for ml_dtypes>=0.5.1,<1; 0.7.0's extension takes ~1 s to import (0.85 s of it in
        # ml_dtypes._ml_dtypes_ext, measured with -X importtime), 0.6.0's 0.1 s. Every `tf1clip run`, each
        # side of `tf1clip parity` and every test subprocess imports it.
        "ml_dtypes>=0.5.1,<0.7",
    ],
    extras_require={
        "plot": ["matplotlib>=3.7"],
        "test": ["pytest>=8,<9", "pytest-xdist>=3", "matplotlib>=3.7"],
    },
    entry_points={"console_scripts": ["tf1clip=tf1clip.cli:main"]},
)
