"""What many test modules share: waiting on a condition (more to come here: one live server, one
gunicorn harness, one PostgreSQL helper)."""
