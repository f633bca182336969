"""What many test modules share: waiting on a condition, a live server (more to come here: one
gunicorn harness, one PostgreSQL helper)."""
