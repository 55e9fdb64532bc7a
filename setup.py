"""Build the solver's C core (companion._solvercore); everything else is in pyproject.toml.

``pip install .`` / ``pip install -e .`` compile it; for a checkout,
``python setup.py build_ext --inplace``.  companion.solver falls back to its
pure-Python core when the extension is missing, so a failed compile only costs
speed (``optional=True``).
"""

from setuptools import Extension, find_packages, setup

setup(
    # models/ (top level, fixed by the design) ships inside the package as
    # vision/_models, so that a non-editable install finds the models
    packages=find_packages(include=["companion*", "vision*"]) + ["vision._models"],
    package_dir={"vision._models": "models"},
    ext_modules=[
        Extension(
            "companion._solvercore",
            sources=["companion/_solvercore.c"],
            optional=True,
        )
    ]
)
