"""The test project: settings and URLs around the generated ``api`` app."""
