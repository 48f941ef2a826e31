"""The toolkit schema compiler (built in its own issue; never imports toolkit_batteries)."""
