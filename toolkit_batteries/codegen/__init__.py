"""The Django side of the schema compiler (app label ``toolkit_codegen_app``).

- ``manage.py compile_schema`` compiles ``<BASE_DIR>/schema/**/*.toolkit`` into a Django app:
  generated models, serializers, views and routes, the next migration, and handler stubs
  (:mod:`.project` does the work, the command prints it).
- :mod:`.views` and :mod:`.fields` are the small runtime the generated code imports: the
  base view that validates a request, calls the user's handler and serialises the result,
  and the serializer fields the schema's types need (base64 bytes, named enums, exclusive
  bounds), with their drf-spectacular descriptions.

Importing this package imports neither DRF nor the compiler; its submodules do.
"""

from __future__ import annotations
