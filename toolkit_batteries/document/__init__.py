"""The ``document`` battery: HTML, Django templates or LaTeX rendered to PDF or page images.

Get the configured service from the registry (``services.document()``) or a container;
pick ``local`` (the default: WeasyPrint in renderer processes), ``remote`` (a rendering
service over HTTP, Gotenberg's wire format) or ``latex`` (``pdflatex`` in a sandbox) in
settings. Every render is bounded by ``timeout`` and ``max_output_bytes``; no adapter
fetches a URL the document names.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "Document DocumentError DocumentTimeoutError DocumentTooLargeError InvalidDocumentError "
        "RenderFailedError Rendered UnsafeSourceError"
    ),
    latexscan="latex_escape",
)
