"""Build the solver's C core (companion._solvercore); everything else is in pyproject.toml.

``pip install .`` / ``pip install -e .`` compile it; for a checkout,
``python setup.py build_ext --inplace``.  companion.solver falls back to its
pure-Python core when the extension is missing, so a failed compile only costs
speed (``optional=True``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "companion._solvercore",
            sources=["companion/_solvercore.c"],
            optional=True,
        )
    ]
)
