"""How the suite writes what it computed: numbers and escaped text (:mod:`.text`), the page model and its
Markdown and HTML writers (:mod:`.page`), inline SVG charts (:mod:`.charts`). It imports nothing else of the suite.
"""
