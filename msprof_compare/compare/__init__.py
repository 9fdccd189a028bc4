"""Comparators: one module per comparison, each a ``build(ctx)`` that turns the two loaded profiles of a
``RunContext`` into the ``Sheet``s of the workbook (``table.py``), so that every reporter (xlsx, JSON,
console, API) shows the same figures. ``api.comparators`` runs them in the original's sheet order;
``summary.build`` runs last, since it reads the others' sheets."""
