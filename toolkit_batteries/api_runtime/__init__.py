"""The runtime of generated API code, and ``manage.py compile_schema``.

Why this name: the compiler is the package ``toolkit_codegen`` (pure Python, no Django);
this package is what a compiled API app *runs on*, so it is named for that, and the two
cannot be confused. Generated modules import it (``from toolkit_batteries.api_runtime
import crud, fields``); the code generation itself stays in the compiler, which
:mod:`.project` only calls. The app label stays
``toolkit_codegen_app`` (it was ``toolkit_batteries.codegen`` before issue 18), so
projects' ``INSTALLED_APPS`` only change the dotted path and migrations are untouched.

- ``manage.py compile_schema`` compiles ``<BASE_DIR>/schema/**/*.toolkit`` into a Django app:
  generated models, serializers, views and routes, the next migration, and handler stubs
  (:mod:`.project` does the work, the command prints it). It lives in this app because
  Django finds management commands only in installed apps, and the runtime is installed
  anyway.
- :mod:`.views`, :mod:`.crud`, :mod:`.relations` and :mod:`.fields` are the small runtime
  the generated code imports: the base view that validates a request, calls the user's
  handler and serialises the result, the ORM defaults of plain CRUD rpcs, which relation
  ids a caller may name and see (``crud.check_references``), and the serializer fields
  the schema's types need (base64 bytes, named enums, exclusive bounds), with their
  drf-spectacular descriptions.

Importing this package imports neither DRF nor the compiler; its submodules do.
"""

from __future__ import annotations
