"""What many test modules share: real products started on 127.0.0.1, and receivers for them.

Each module here starts one real server the tests talk to (OpenBao, localstripe, ...)
or records what a real server sends (webhooks), so a test module never writes its own.
"""
