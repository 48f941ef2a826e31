"""An installed app with a ``schedules`` module, for the autodiscovery test."""
